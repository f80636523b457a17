package actor_test

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// A local ask costs its future (the handler's CallContext is part of the
// future's own allocation), the future's channel, and what the endpoint
// allocates: no more.
func TestLocalAskAllocations(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("the race detector allocates differently")
	}
	env := newEnv(t, nil)
	reply := wrapperspb.Int64(1)
	ref := register(t, env, "echo", &fixedReplier{reply: reply})
	msg := wrapperspb.Int64(2)
	ctx := testutil.Context(t, testTimeout)
	ask := func() {
		if _, err := actor.AskAs[*wrapperspb.Int64Value](ctx, ref, msg); err != nil {
			t.Fatal(err)
		}
	}
	ask()
	const asks = 200
	n := testing.AllocsPerRun(5, func() {
		for range asks {
			ask()
		}
	}) / asks
	t.Logf("%.2f allocations per local ask", n)
	if n > 2.5 {
		t.Fatalf("%.2f allocations per local ask, want at most 2.5 (the future, its channel, and the growth of the future registry's queue)", n)
	}
}

// fixedReplier answers every ask with its reply, allocating nothing.
type fixedReplier struct{ reply proto.Message }

func (r *fixedReplier) Receive(*actor.Context, proto.Message) error { return nil }

func (r *fixedReplier) ReceiveAndReply(ctx *actor.CallContext, _ proto.Message) error {
	ctx.Reply(r.reply)
	return nil
}

// countingSink counts the one-way messages it gets and says when it has
// had want of them; aware makes it PeerAware.
type countingSink struct {
	aware   bool
	n, want int
	done    chan struct{}
}

func (s *countingSink) Receive(*actor.Context, proto.Message) error {
	if s.n++; s.n == s.want {
		s.n = 0
		s.done <- struct{}{}
	}
	return nil
}

func (s *countingSink) PeerAware() bool { return s.aware }

// A PeerAware endpoint learns which env each one-way message came from at
// no allocation: its mailbox keeps the peer beside the message. Before, each
// such message was wrapped in an allocation of its own, two more for every
// empty task on the driver (TestEmptyTaskAllocations).
func TestPeerAwareOneWayAllocations(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("the race detector allocates differently")
	}
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	const msgs = 200
	perMessage := func(aware bool) float64 {
		name := "unaware"
		if aware {
			name = "aware"
		}
		s := &countingSink{aware: aware, want: msgs, done: make(chan struct{}, 1)}
		register(t, server, name, s)
		ref := setupRef(t, client, server, name)
		msg := wrapperspb.Int64(1)
		send := func() {
			for range msgs {
				if err := ref.Send(msg); err != nil {
					t.Fatal(err)
				}
			}
			testutil.Recv(t, s.done, testTimeout, "the messages")
		}
		send()
		return testing.AllocsPerRun(5, send) / msgs
	}
	unaware, aware := perMessage(false), perMessage(true)
	t.Logf("%.2f allocations per one-way message to a PeerAware endpoint, %.2f to another", aware, unaware)
	if aware > unaware+0.1 {
		t.Fatalf("%.2f allocations per one-way message to a PeerAware endpoint, %.2f to another: want no more", aware, unaware)
	}
}
