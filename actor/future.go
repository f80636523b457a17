package actor

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// Future is the pending result of an ask. It completes exactly once: with the
// reply, with the failure the endpoint sent, with an *RpcTimeoutError when the
// ask's RpcTimeout passes, with the cause of the ask's context when that is
// cancelled, or at once when the endpoint is unknown or the connection it
// depends on closes. Its methods are safe for concurrent use by any number of
// goroutines.
//
// For a remote ask the Future is also a protoactor process registered under
// its own id, which is the sender PID of the request: the reply comes back to
// it over the transport.
type Future struct {
	done  chan struct{}
	state atomic.Uint32
	res   proto.Message
	err   error

	env     *Env
	req     proto.Message // the request of a local ask; never changed after newFuture
	timeout RpcTimeout
	target  *Ref

	mu     sync.Mutex
	timer  *time.Timer
	stopFn func() bool
	pid    *protoactor.PID // registered id of a remote ask
	peer   string          // identity of the peer of a remote ask
}

func newFuture(e *Env, target *Ref, req proto.Message, t RpcTimeout) *Future {
	return &Future{done: make(chan struct{}), env: e, target: target, req: req, timeout: t}
}

func failedFuture(err error) *Future {
	f := &Future{done: make(chan struct{})}
	f.complete(nil, err)
	return f
}

// arm starts the timeout and the context watch. It runs before the request
// is sent, so that a fast reply always finds them set.
func (f *Future) arm(ctx context.Context) {
	f.mu.Lock()
	if !f.timeout.infinite() {
		f.timer = time.AfterFunc(f.timeout.Duration, f.expire)
	}
	if ctx.Done() != nil {
		f.stopFn = context.AfterFunc(ctx, func() {
			f.complete(nil, fmt.Errorf("ask aborted: %w", context.Cause(ctx)))
		})
	}
	f.mu.Unlock()
}

func (f *Future) expire() {
	addr := ""
	if f.target != nil {
		addr = f.target.replyAddress()
	}
	f.complete(nil, &RpcTimeoutError{Addr: addr, Duration: f.timeout.Duration, Key: f.timeout.Key})
}

// complete sets the result once and releases what the ask held.
func (f *Future) complete(res proto.Message, err error) bool {
	if !f.state.CompareAndSwap(0, 1) {
		return false
	}
	f.res, f.err = res, err
	close(f.done)
	f.mu.Lock()
	timer, stopFn, pid, peer := f.timer, f.stopFn, f.pid, f.peer
	f.timer, f.stopFn, f.pid = nil, nil, nil
	f.mu.Unlock()
	if timer != nil {
		timer.Stop()
	}
	if stopFn != nil {
		stopFn()
	}
	if pid != nil {
		f.env.system.ProcessRegistry.Remove(pid)
		f.env.removePending(peer, f)
	}
	return true
}

// Done is closed when the future completes.
func (f *Future) Done() <-chan struct{} { return f.done }

// Result waits for the future and returns the reply or the error. It always
// returns: every ask completes, at the latest when its timeout passes
// (except an ask made with InfiniteTimeout, which waits for its reply, its
// context or its connection).
func (f *Future) Result() (proto.Message, error) {
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
	select {
	case <-f.done:
		return f.res, f.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// SendUserMessage receives the reply of a remote or protoactor-routed ask;
// it makes *Future a protoactor Process.
func (f *Future) SendUserMessage(_ *protoactor.PID, message any) {
	_, msg, _ := protoactor.UnwrapEnvelope(message)
	switch m := msg.(type) {
	case *messages.RpcFailure:
		f.complete(nil, FailureFromProto(m))
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
