package netty_test

import (
	"testing"

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
	if got := recv(t, first.got).(*wrapperspb.StringValue).GetValue(); got != "one" {
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
		if got := recv(t, second.got).(*wrapperspb.StringValue).GetValue(); got != s {
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
