package netty_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// peers records the length of each StringValue it is sent and what
// Context.Peer says of it.
type peers struct{ got chan [2]string }

func (p *peers) Receive(ctx *actor.Context, msg proto.Message) error {
	p.got <- [2]string{msg.(*wrapperspb.StringValue).GetValue()[:1], ctx.Peer()}
	return nil
}

func (*peers) PeerAware() bool { return true }

// Over TCP, a PeerAware endpoint reads as the Peer of a one-way message the
// identity of the connection it was read on: for a small frame, and for
// one larger than the reader's buffer, which the endpoint's loop decodes.
func TestPeerOverTCP(t *testing.T) {
	server := newEnv(t, "server", nil)
	client := newClientEnv(t, "client", nil)
	p := &peers{got: make(chan [2]string, 2)}
	register(t, server, "peers", p)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	ref, err := client.SetupEndpointRef(ctx, server.Address(), "peers")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"small", "L" + strings.Repeat("x", 200<<10)} {
		if err := ref.Send(wrapperspb.String(m)); err != nil {
			t.Fatal(err)
		}
		got := testutil.Recv(t, p.got, waitFor, "the message")
		if got != [2]string{m[:1], client.Identity()} {
			t.Errorf("message %q…: Peer %q, want the client's identity %q", got[0], got[1], client.Identity())
		}
	}
}
