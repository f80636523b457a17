package actor_test

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// peerRecorder records, for each StringValue it is sent, the value and
// what Context.Peer says; aware makes it PeerAware.
type peerRecorder struct {
	aware bool
	got   chan [2]string
}

func (r *peerRecorder) Receive(ctx *actor.Context, msg proto.Message) error {
	r.got <- [2]string{msg.(*wrapperspb.StringValue).GetValue(), ctx.Peer()}
	return nil
}

func (r *peerRecorder) PeerAware() bool { return r.aware }

// A PeerAware endpoint reads with Context.Peer which env each one-way
// message came from: the sender's identity for one from another env, ""
// for one from its own. An endpoint that does not ask reads "" for both,
// as one-way messages carry no sender.
func TestPeerOfOneWayMessages(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	for _, aware := range []bool{true, false} {
		name := "unaware"
		if aware {
			name = "aware"
		}
		r := &peerRecorder{aware: aware, got: make(chan [2]string, 2)}
		local := register(t, server, name, r)
		remote := setupRef(t, client, server, name)
		if err := remote.Send(wrapperspb.String("remote")); err != nil {
			t.Fatal(err)
		}
		if err := local.Send(wrapperspb.String("local")); err != nil {
			t.Fatal(err)
		}
		wantRemote := ""
		if aware {
			wantRemote = client.Identity()
		}
		for _, want := range [][2]string{{"remote", wantRemote}, {"local", ""}} {
			if got := testutil.Recv(t, r.got, testTimeout, "a message"); got != want {
				t.Errorf("%s endpoint: got %q with Peer %q, want %q with %q", name, got[0], got[1], want[0], want[1])
			}
		}
	}
}

// concurrentPeers is PeerAware with two threads.
type concurrentPeers struct{ peerRecorder }

func (concurrentPeers) ThreadCount() int { return 2 }

// A PeerAware endpoint must be serial: Peer is the endpoint's, set for the
// message it handles.
func TestPeerAwareEndpointsAreSerial(t *testing.T) {
	env := newEnv(t, nil)
	_, err := env.RegisterEndpoint("concurrent", &concurrentPeers{peerRecorder{aware: true}})
	if !errors.Is(err, actor.ErrInvalidEndpoint) {
		t.Fatalf("RegisterEndpoint of a concurrent PeerAware endpoint: %v, want ErrInvalidEndpoint", err)
	}
}
