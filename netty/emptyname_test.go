package netty_test

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// heldReply replies to an ask once the test opens it.
type heldReply struct {
	asked chan struct{}
	open  chan struct{}
}

func (h *heldReply) Receive(*actor.Context, proto.Message) error { return nil }

func (h *heldReply) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	h.asked <- struct{}{}
	<-h.open
	ctx.Reply(msg)
	return nil
}

// A message to an empty endpoint name is refused by Send with
// actor.ErrInvalidName, as one to the transport's control target is: it is
// not written, so that the peer does not close the connection as one that
// breaks the protocol, failing the asks that wait on it for other
// endpoints, and dropping what else was queued. Before, Send took it, the
// peer closed the connection, and the other endpoint's pending ask failed.
func TestSendToEmptyNameIsRefusedAndLosesNothing(t *testing.T) {
	server := newEnv(t, "server", nil)
	g := &heldReply{asked: make(chan struct{}, 1), open: make(chan struct{})}
	register(t, server, "held", g)
	client := newClientEnv(t, "client", nil)
	pending := client.RemoteRef(server.Address(), "held").Ask(testutil.Context(t, waitFor), str("pending"))
	<-g.asked // the connection is up and the ask waits on it

	sendErr := client.RemoteRef(server.Address(), "").Send(str("x"))
	_, askErr := client.RemoteRef(server.Address(), "").AskSync(testutil.Context(t, waitFor), str("x"))
	close(g.open)
	res, err := pending.Result()
	if err != nil {
		t.Errorf("the pending ask to another endpoint failed: %v", err)
	} else if res.(*wrapperspb.StringValue).GetValue() != "pending" {
		t.Errorf("pending ask: got %v", res)
	}
	if !errors.Is(sendErr, actor.ErrInvalidName) {
		t.Errorf("Send to an empty name: %v, want actor.ErrInvalidName", sendErr)
	}
	if !errors.Is(askErr, actor.ErrInvalidName) {
		t.Errorf("Ask of an empty name: %v, want actor.ErrInvalidName", askErr)
	}
}
