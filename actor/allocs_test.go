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
