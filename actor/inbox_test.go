package actor_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
)

// The network-event cases of Spark's InboxSuite, driven through the env's
// TransportHost methods (what a transport calls).

var peer11111 = actor.Peer{Identity: "localhost:11111", Address: actor.NewRpcAddress("localhost", 11111)}

// barrier asks ref once: the ask queues behind every event posted before
// it, so afterwards the endpoint has handled them all.
func barrier(t *testing.T, ref *actor.Ref) {
	t.Helper()
	askString(t, ref, "barrier")
}

func TestOnConnected(t *testing.T) {
	e := newEnv(t, nil)
	ep := &testEndpoint{}
	ref := register(t, e, "inbox", ep)
	actor.HostOf(e).Connected(peer11111)
	barrier(t, ref)
	if got, want := ep.Events(), []string{"start", "connected:localhost:11111", "ask:barrier"}; !slices.Equal(got, want) {
		t.Fatalf("calls = %q, want %q", got, want)
	}
}

func TestOnDisconnected(t *testing.T) {
	e := newEnv(t, nil)
	ep := &testEndpoint{}
	ref := register(t, e, "inbox", ep)
	actor.HostOf(e).Disconnected(peer11111, nil)
	barrier(t, ref)
	if got, want := ep.Events(), []string{"start", "disconnected:localhost:11111", "ask:barrier"}; !slices.Equal(got, want) {
		t.Fatalf("calls = %q, want %q", got, want)
	}
}

func TestOnNetworkError(t *testing.T) {
	e := newEnv(t, nil)
	ep := &testEndpoint{}
	ref := register(t, e, "inbox", ep)
	actor.HostOf(e).NetworkError(peer11111, errors.New("Oops"))
	barrier(t, ref)
	if got, want := ep.Events(), []string{"start", "networkError:Oops@localhost:11111", "ask:barrier"}; !slices.Equal(got, want) {
		t.Fatalf("calls = %q, want %q", got, want)
	}
}

func TestNetworkEventsReachEveryEndpoint(t *testing.T) {
	e := newEnv(t, nil)
	var eps []*testEndpoint
	var refs []*actor.Ref
	for _, name := range []string{"a", "b", "c"} {
		ep := &testEndpoint{}
		eps = append(eps, ep)
		refs = append(refs, register(t, e, name, ep))
	}
	// A stopped endpoint is not told.
	stopped := &testEndpoint{}
	if err := e.Stop(register(t, e, "stopped", stopped)); err != nil {
		t.Fatal(err)
	}
	stopped.waitFor(t, "stop")
	actor.HostOf(e).Connected(peer11111)
	actor.HostOf(e).Disconnected(peer11111, nil)
	for i, ep := range eps {
		barrier(t, refs[i])
		want := []string{"start", "connected:localhost:11111", "disconnected:localhost:11111", "ask:barrier"}
		if got := ep.Events(); !slices.Equal(got, want) {
			t.Errorf("endpoint %d: calls = %q, want %q", i, got, want)
		}
	}
	if got := stopped.Events(); !slices.Equal(got, []string{"start", "stop"}) {
		t.Errorf("stopped endpoint: calls = %q", got)
	}
}

// failingHooks returns errors from, or panics in, its network hooks.
type failingHooks struct {
	*testEndpoint
}

func (f failingHooks) OnConnected(*actor.Context, actor.RpcAddress) error {
	return errors.New("connect hook failed")
}

func (f failingHooks) OnDisconnected(*actor.Context, actor.RpcAddress) error {
	panic("disconnect hook panicked")
}

func TestNetworkHookErrorsGoToOnError(t *testing.T) {
	e := newEnv(t, nil)
	ep := &testEndpoint{}
	ref := register(t, e, "hooks", failingHooks{ep})
	actor.HostOf(e).Connected(peer11111)
	actor.HostOf(e).Disconnected(peer11111, nil)
	barrier(t, ref)
	errs := ep.Errors()
	if len(errs) != 2 {
		t.Fatalf("OnError got %v, want 2 errors", errs)
	}
	if errs[0].Error() != "connect hook failed" {
		t.Errorf("first error = %v", errs[0])
	}
	var pe *actor.PanicError
	if !errors.As(errs[1], &pe) || pe.Value != "disconnect hook panicked" {
		t.Errorf("second error = %v, want a *PanicError", errs[1])
	}
}

func TestDisconnectedFailsNothingLocal(t *testing.T) {
	// A disconnection of an unrelated peer leaves local asks alone.
	e := newEnv(t, nil)
	pending := make(chan *actor.CallContext, 1)
	ref := register(t, e, "slow", &testEndpoint{ask: func(ctx *actor.CallContext, _ proto.Message) error {
		pending <- ctx
		return nil
	}})
	f := ref.Ask(testutil.Context(t, testTimeout), str("q"))
	cc := testutil.Recv(t, pending, testTimeout, "the ask")
	actor.HostOf(e).Disconnected(peer11111, errors.New("gone"))
	select {
	case <-f.Done():
		_, err := f.Result()
		t.Fatalf("a local ask failed on an unrelated disconnection: %v", err)
	default:
	}
	cc.Reply(str("a"))
	if res, err := f.Wait(testutil.Context(t, testTimeout)); err != nil || text(res) != "a" {
		t.Fatalf("ask = %v, %v", res, err)
	}
}
