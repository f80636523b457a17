// Ref: a reference to a local or remote endpoint, and Send and Ask on it.

package actor

import (
	"context"
	"reflect"
	"sync/atomic"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Ref is a reference to an endpoint, local or remote: Spark's
// RpcEndpointRef. It is safe for concurrent use and cheap to copy around;
// send it inside messages with Proto and get it back with Env.RefFromProto.
type Ref struct {
	env    *Env
	pid    *protoactor.PID
	name   string
	addr   RpcAddress
	client bool
	cell   *cell // set for an endpoint of this env

	sentTo atomic.Pointer[msgCounter] // the counter of the type sent last (see countSent)

	// Every Send and Ask reads the Ref. Without the padding it is 80 bytes,
	// the size class of many small messages (a BenchPing, say), so the
	// allocator puts it beside them, on cache lines that another processor
	// writes whenever it makes or decodes one: each send then misses the
	// cache. At 128 bytes, a size class of whole cache lines, it has its
	// lines to itself (TestRefOwnsItsCacheLines).
	_ [48]byte
}

// Name returns the endpoint name.
func (r *Ref) Name() string { return r.name }

// Address returns the listen address of the endpoint's env; the zero
// RpcAddress when that env does not listen.
func (r *Ref) Address() RpcAddress { return r.addr }

// PID returns the endpoint's protoactor PID. Plain protoactor code can
// Send, Request and RequestFuture to it, locally and across envs.
func (r *Ref) PID() *protoactor.PID { return r.pid }

// EndpointAddress returns the endpoint's address.
func (r *Ref) EndpointAddress() EndpointAddress {
	return EndpointAddress{Address: r.addr, Name: r.name}
}

// String returns "spark://name@host:port", or "spark-client://name" for an
// endpoint of an env that does not listen.
func (r *Ref) String() string { return r.EndpointAddress().String() }

// Proto returns the reference as a message field.
func (r *Ref) Proto() *messages.EndpointRef {
	return &messages.EndpointRef{Address: r.pid.Address, Name: r.name, Client: r.client || r.addr.IsZero()}
}

func (r *Ref) local() bool { return r.pid.Address == r.env.identity }

// localCell returns the cell of a local endpoint, or nil.
func (r *Ref) localCell() *cell {
	if r.cell != nil {
		return r.cell
	}
	if c, ok := r.env.endpoints.Load(r.name); ok {
		return c.(*cell)
	}
	return nil
}

// replyAddress is the address a timeout error names.
func (r *Ref) replyAddress() string {
	if !r.addr.IsZero() {
		return r.addr.HostPort()
	}
	if !r.local() {
		if a := r.env.peerAddress(r.pid.Address); !a.IsZero() {
			return a.String()
		}
	}
	return r.String()
}

// Send sends msg one way (Spark's send): no reply, no delivery guarantee
// once it has left this env. It fails at once with ErrNilMessage,
// ErrEnvStopped, or an *EndpointNotFoundError for a local endpoint that is
// not (or no longer) registered.
func (r *Ref) Send(msg proto.Message) error {
	if r.isNil(msg) {
		return ErrNilMessage
	}
	e := r.env
	if e.stopped.Load() {
		return ErrEnvStopped
	}
	if r.local() {
		c := r.localCell()
		if c == nil || c.stopping.Load() {
			return &EndpointNotFoundError{Name: r.name}
		}
		c.postMessage(msg, reflect.TypeOf(msg))
		return nil
	}
	if err := e.sendRemote(r.pid, nil, msg); err != nil {
		return err
	}
	r.countSent(msg)
	return nil
}

// Ask sends msg and returns a future for the reply, with the env's default
// ask timeout (spark.rpc.askTimeout, else spark.network.timeout, else 120s).
// Cancelling ctx fails the future with ctx's cause: Result and Wait return at
// once, Done is closed within a few milliseconds.
func (r *Ref) Ask(ctx context.Context, msg proto.Message) *Future {
	return r.AskWithTimeout(ctx, msg, r.env.askTimeout)
}

// AskWithTimeout is Ask with an explicit timeout.
func (r *Ref) AskWithTimeout(ctx context.Context, msg proto.Message, t RpcTimeout) *Future {
	return r.ask(ctx, msg, t, "")
}

// ask is AskWithTimeout of a reply of the type want ("" for any): the
// transport refuses, without decoding it, a reply of another type (but
// RpcFailure).
func (r *Ref) ask(ctx context.Context, msg proto.Message, t RpcTimeout, want protoreflect.FullName) *Future {
	if isNilMessage(msg) {
		return failedFuture(ErrNilMessage)
	}
	if err := t.Validate(); err != nil {
		return failedFuture(err)
	}
	e := r.env
	if e.stopped.Load() {
		return failedFuture(ErrEnvStopped)
	}
	if err := ctx.Err(); err != nil {
		return failedFuture(context.Cause(ctx))
	}
	f := newFuture(e, r, msg, t)
	if r.local() {
		c := r.localCell()
		if c == nil || c.stopping.Load() {
			f.complete(nil, &EndpointNotFoundError{Name: r.name})
			return f
		}
		f.watch(ctx)
		if e.futures.seq.Load()%localAskSampling == 0 {
			f.start = e.asks.now() // before add: the timer may fire at once
		}
		if _, ok := e.futures.add(f); !ok {
			f.complete(nil, ErrEnvStopped)
			return f
		}
		c.postMessage(f, reflect.TypeOf(f.req))
		return f
	}
	if e.transport == nil {
		f.complete(nil, ErrNoTransport)
		return f
	}
	// The future is registered (and its timeout set) before the request
	// is sent, so that a fast reply always finds it.
	f.peer, f.want = r.pid.Address, want
	f.watch(ctx)
	f.start = e.asks.now() // before add: the timer may fire at once
	id, ok := e.futures.add(f)
	if !ok {
		f.complete(nil, ErrEnvStopped)
		return f
	}
	f.setReplyTo(e.identity, id) // no allocation of its own: see Future.replyID
	if err := e.transport.Send(r.pid, &f.replyTo, msg); err != nil {
		f.complete(nil, err)
	} else {
		r.countSent(msg)
	}
	return f
}

// AskSync sends msg and waits for the reply (Spark's askSync), with the
// env's default ask timeout. It must not be called from a handler of the
// endpoint it asks.
func (r *Ref) AskSync(ctx context.Context, msg proto.Message) (proto.Message, error) {
	return r.AskWithTimeout(ctx, msg, r.env.askTimeout).Result()
}

// AskSyncWithTimeout is AskSync with an explicit timeout.
func (r *Ref) AskSyncWithTimeout(ctx context.Context, msg proto.Message, t RpcTimeout) (proto.Message, error) {
	return r.AskWithTimeout(ctx, msg, t).Result()
}

// AskAs asks r with the env's default timeout and returns the reply as a T;
// a reply of another type is a *ReplyTypeError.
//
// The reply is bound to T before the request leaves: a remote reply of
// another type is refused by the transport without being decoded, and the
// ask fails with an RpcFailure that names both types.
func AskAs[T proto.Message](ctx context.Context, r *Ref, msg proto.Message) (T, error) {
	var want protoreflect.FullName
	if zero := any(*new(T)); zero != nil { // nil when T is an interface
		want = zero.(proto.Message).ProtoReflect().Descriptor().FullName()
	}
	return ResultAs[T](r.ask(ctx, msg, r.env.askTimeout, want))
}

// ResultAs waits for f and returns its reply as a T; a reply of another type
// is a *ReplyTypeError.
func ResultAs[T proto.Message](f *Future) (T, error) {
	var zero T
	res, err := f.Result()
	if err != nil {
		return zero, err
	}
	t, ok := res.(T)
	if !ok {
		return zero, &ReplyTypeError{Want: string(zero.ProtoReflect().Descriptor().FullName()), Got: string(res.ProtoReflect().Descriptor().FullName())}
	}
	return t, nil
}
