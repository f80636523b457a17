package netty_test

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// A connection keeps the endpoint it delivers to. Once that endpoint is
// stopped and its name registered again, later messages on the same
// connection reach the new endpoint, and none reaches the old one.
func TestMessagesReachTheEndpointThatTookTheName(t *testing.T) {
	server := newEnv(t, "server", nil)
	first := newEcho()
	ref := register(t, server, "swap", first)
	client := newClientEnv(t, "client", nil)
	remote := lookup(t, client, server.Address(), "swap")
	if err := remote.Send(str("one")); err != nil {
		t.Fatal(err)
	}
	if got := testutil.Recv(t, first.got, waitFor, "a message").(*wrapperspb.StringValue).GetValue(); got != "one" {
		t.Fatalf("first endpoint got %q, want one", got)
	}
	if err := server.Stop(ref); err != nil {
		t.Fatal(err)
	}
	second := newEcho()
	register(t, server, "swap", second)
	for _, s := range []string{"two", "three"} {
		if err := remote.Send(str(s)); err != nil {
			t.Fatal(err)
		}
		if got := testutil.Recv(t, second.got, waitFor, "a message").(*wrapperspb.StringValue).GetValue(); got != s {
			t.Fatalf("second endpoint got %q, want %q", got, s)
		}
	}
	if got := askString(t, remote, "four"); got != "four" {
		t.Fatalf("ask: got %q, want four", got)
	}
	select {
	case m := <-first.got:
		t.Fatalf("the stopped endpoint got %v", m)
	default:
	}
}

// stopSignal is an echo that closes stopped when its OnStop runs, and holds
// a buffer big enough to matter if it were kept.
type stopSignal struct {
	*echo
	stopped chan struct{}
	ballast []byte
}

func (s *stopSignal) OnStop(*actor.Context) error {
	close(s.stopped)
	return nil
}

// A connection keeps no stopped endpoint in memory: once an endpoint it
// delivered to has stopped, and nothing else refers to it, the collector
// frees it, though the connection lives on.
func TestConnectionKeepsNoStoppedEndpoint(t *testing.T) {
	server := newEnv(t, "server", nil)
	client := newClientEnv(t, "client", nil)
	stopped := make(chan struct{})
	kept := func() weak.Pointer[stopSignal] {
		ep := &stopSignal{echo: newEcho(), stopped: stopped, ballast: make([]byte, 1<<20)}
		ref := register(t, server, "gone", ep)
		if err := lookup(t, client, server.Address(), "gone").Send(str("one")); err != nil {
			t.Fatal(err)
		}
		testutil.Recv(t, ep.got, waitFor, "a message")
		if err := server.Stop(ref); err != nil {
			t.Fatal(err)
		}
		return weak.Make(ep)
	}()
	select {
	case <-stopped:
	case <-time.After(waitFor):
		t.Fatal("OnStop did not run")
	}
	// The same connection delivers on, to another endpoint.
	register(t, server, "other", newEcho())
	if got := askString(t, lookup(t, client, server.Address(), "other"), "still here"); got != "still here" {
		t.Fatalf("ask: got %q", got)
	}
	// The stopped endpoint's last references (its loop's) go as its
	// goroutines finish: collect until it is gone, for a bounded time.
	deadline := time.Now().Add(waitFor)
	for kept.Value() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the stopped endpoint is still reachable")
		}
		runtime.GC()
	}
}
