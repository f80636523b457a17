// Future: a pending ask, its timeout and its completion.

package actor

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Future is the pending result of an ask. It completes exactly once: with the
// reply, with the failure the endpoint sent, with an *RpcTimeoutError when the
// ask's RpcTimeout passes, with the cause of the ask's context when that is
// cancelled, or at once when the endpoint is unknown or the connection it
// depends on closes. Its methods are safe for concurrent use by any number of
// goroutines.
//
// A remote ask is registered in its env under a random id of its own, which
// is the sender PID of the request: the reply comes back to it over the
// transport (TransportHost.LookupReply), from the peer it went to only. A
// Future is also a protoactor Process, so that protoactor code holding one
// can complete it.
type Future struct {
	done  chan struct{}
	state atomic.Uint32
	res   proto.Message
	err   error

	env     *Env
	req     proto.Message // the request of a local ask; never changed after newFuture
	timeout RpcTimeout
	target  *Ref
	ctx     context.Context // the ask's context when it can end, else nil
	id      uint64          // registry id of the ask (random), 0 when not registered
	seq     uint64          // sequence number of the ask (see TransportHost.PendingAsks)
	// want is the full name of the reply type the asker expects (AskAs,
	// ResultAs's type when the ask is made by AskAs), or "" for any: a
	// reply of another type (but RpcFailure) is refused undecoded.
	want    protoreflect.FullName
	peer    string         // identity of the peer of a remote ask
	replyTo protoactor.PID // the sender PID of a remote ask
	// replyID holds the bytes of replyTo.Id, so that the id string of an ask
	// is no allocation of its own: it is written once, before the request
	// is sent, and never changed.
	replyID [futureIDLen]byte
	// The two flags fill replyID's padding, which keeps a Future in the
	// 352-byte size class.
	queued bool          // queued for the sweeper (set and read by the asker)
	armed  bool          // under mu
	start  time.Duration // when a timed ask was made (askStats.now), else 0

	mu     sync.Mutex
	timer  *time.Timer
	stopFn func() bool

	// call is the CallContext of a local ask, set by the endpoint that
	// handles it: the handler's way to the future, in the future's own
	// allocation.
	call CallContext
}

func newFuture(e *Env, target *Ref, req proto.Message, t RpcTimeout) *Future {
	return &Future{done: make(chan struct{}), env: e, target: target, req: req, timeout: t}
}

// setReplyTo makes the future's sender PID that of the remote ask id of the
// env identity, its id string kept in the future itself.
func (f *Future) setReplyTo(identity string, id uint64) {
	b := appendFutureID(f.replyID[:0], id)
	f.replyTo.Address, f.replyTo.Id = identity, unsafe.String(unsafe.SliceData(b), len(b))
}

func failedFuture(err error) *Future {
	f := &Future{done: make(chan struct{})}
	f.complete(nil, err)
	return f
}

// watch records what the ask must watch: its deadline and its context. It
// runs before the request is sent; the env's registry arms the timer and the
// context watch when the ask outlives a tick of its sweeper (see
// futureRegistry).
func (f *Future) watch(ctx context.Context) {
	if ctx.Done() != nil {
		f.ctx = ctx
	}
}

// arm starts the timeout and the context watch, unless the future has
// completed or is armed already. since is when the ask was made at the
// latest: the timeout fires at since+timeout (the zero time: now).
func (f *Future) arm(since time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.armed || f.state.Load() != 0 {
		return
	}
	f.armed = true
	if !f.timeout.infinite() {
		d := f.timeout.Duration
		if !since.IsZero() {
			d = time.Until(since.Add(d))
		}
		f.timer = time.AfterFunc(d, f.expire)
	}
	if ctx := f.ctx; ctx != nil {
		f.stopFn = context.AfterFunc(ctx, func() { f.abort(ctx) })
	}
}

func (f *Future) abort(ctx context.Context) {
	f.complete(nil, &askAbortedError{cause: context.Cause(ctx)})
}

// askAbortedError is the failure of an ask whose context ended: it wraps
// the context's cause (whatever context.WithCancelCause gave), and tells
// the ask failure metrics that the ask was cancelled.
type askAbortedError struct{ cause error }

func (e *askAbortedError) Error() string { return "ask aborted: " + e.cause.Error() }
func (e *askAbortedError) Unwrap() error { return e.cause }

func (f *Future) expire() {
	addr := ""
	if f.target != nil {
		addr = f.target.replyAddress()
	}
	f.complete(nil, &RpcTimeoutError{Addr: addr, Duration: f.timeout.Duration, Key: f.timeout.Key})
}

// complete sets the result once and releases what the ask held.
func (f *Future) complete(res proto.Message, err error) bool {
	return f.completeFrom(res, err, false)
}

// completeFrom is complete; fromEndpoint tells that the endpoint itself
// failed the ask (for the ask failure metrics).
func (f *Future) completeFrom(res proto.Message, err error, fromEndpoint bool) bool {
	if !f.state.CompareAndSwap(0, 1) {
		return false
	}
	if f.env != nil {
		f.env.asks.completed(f.start, err, fromEndpoint)
	}
	f.res, f.err = res, err
	if f.id != 0 {
		// Forget the ask before its waiter wakes: once Result returns, the
		// ask is no longer counted as in flight.
		f.env.futures.remove(f.id)
	}
	close(f.done)
	f.mu.Lock()
	timer, stopFn := f.timer, f.stopFn
	f.timer, f.stopFn = nil, nil
	f.mu.Unlock()
	if timer != nil {
		timer.Stop()
	}
	if stopFn != nil {
		stopFn()
	}
	return true
}

// Done is closed when the future completes.
func (f *Future) Done() <-chan struct{} { return f.done }

// Result waits for the future and returns the reply or the error; when the
// ask's context ends first, it completes the ask with the context's cause at
// once. It always returns: every ask completes, at the latest when its
// timeout passes (except an ask made with InfiniteTimeout, which waits for
// its reply, its context or its connection).
func (f *Future) Result() (proto.Message, error) {
	if ctx := f.ctx; ctx != nil {
		select {
		case <-f.done:
		case <-ctx.Done():
			f.abort(ctx)
			<-f.done
		}
		return f.res, f.err
	}
	<-f.done
	return f.res, f.err
}

// Wait is Result bounded by ctx: when ctx ends first it returns ctx's cause
// and leaves the ask running.
func (f *Future) Wait(ctx context.Context) (proto.Message, error) {
	select {
	case <-f.done:
		return f.res, f.err
	default:
	}
	var askDone <-chan struct{}
	if f.ctx != nil {
		askDone = f.ctx.Done()
	}
	select {
	case <-f.done:
		return f.res, f.err
	case <-askDone:
		f.abort(f.ctx)
		<-f.done
		return f.res, f.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// SendUserMessage receives the reply of a remote or protoactor-routed ask;
// it makes *Future a protoactor Process.
func (f *Future) SendUserMessage(_ *protoactor.PID, message any) {
	_, msg, _ := protoactor.UnwrapEnvelope(message)
	f.receive(msg)
}

// receive completes the future with a reply, or with the failure it
// carries.
func (f *Future) receive(msg any) {
	switch m := msg.(type) {
	case *messages.RpcFailure:
		f.completeFrom(nil, FailureFromProto(m), true)
	case *protoactor.DeadLetterResponse:
		name := ""
		if f.target != nil {
			name = f.target.name
		}
		f.complete(nil, &EndpointNotFoundError{Name: name})
	case *failure:
		f.complete(nil, m.err)
	case proto.Message:
		f.complete(m, nil)
	default:
		f.complete(nil, fmt.Errorf("%w: reply of type %T is not a protobuf message", ErrUnsupportedMessage, msg))
	}
}

// SendSystemMessage ignores system messages; it makes *Future a protoactor Process.
func (f *Future) SendSystemMessage(*protoactor.PID, any) {}

// Stop ignores stop requests; it makes *Future a protoactor Process.
func (f *Future) Stop(*protoactor.PID) {}

// failure carries a local error to a future through the process registry.
type failure struct{ err error }
