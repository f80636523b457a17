package actor_test

import (
	"testing"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
)

// AfterProcessed runs its function once the messages delivered before it
// have been handled, and at once for a name no endpoint has.
func TestAfterProcessed(t *testing.T) {
	e := newEnv(t, nil)
	gate := testutil.NewGate(t)
	handled := make(chan string, 4)
	register(t, e, "slow", &testEndpoint{receive: func(_ *actor.Context, msg proto.Message) error {
		<-gate.Opened()
		handled <- text(msg)
		return nil
	}})
	target := &protoactor.PID{Address: e.Identity(), Id: "slow"}
	actor.HostOf(e).Deliver(target, actor.Inbound{Msg: str("a")})
	actor.HostOf(e).Deliver(target, actor.Inbound{Msg: str("b")})
	marked := make(chan struct{})
	actor.HostOf(e).AfterProcessed(target, func() { close(marked) })
	select {
	case <-marked:
		t.Fatal("ran before the messages were handled")
	default:
	}
	gate.Open()
	testutil.Recv(t, marked, testTimeout, "the mark")
	if len(handled) != 2 {
		t.Fatalf("mark ran after %d of 2 messages", len(handled))
	}
	now := make(chan struct{})
	actor.HostOf(e).AfterProcessed(&protoactor.PID{Address: e.Identity(), Id: "nobody"}, func() { close(now) })
	testutil.Recv(t, now, testTimeout, "the mark for a missing endpoint")
}
