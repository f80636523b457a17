package netty

import (
	"testing"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Send keeps the peer it found last (Transport.lastPeer). Once that peer
// has left the map (its connection closed), Send finds or makes the peer
// that is in the map, and sends over a new connection, rather than trying
// the removed one again.
func TestSendAfterItsLastPeerLeftTheMap(t *testing.T) {
	seq := &sequence{last: map[int64]int64{}, got: map[int64]int64{}, count: map[int64]int{}}
	server := testServer(t, NewTransport(WithLogger(zerolog.Nop())))
	if _, err := server.RegisterEndpoint("order", seq); err != nil {
		t.Fatal(err)
	}
	client := NewTransport(WithLogger(zerolog.Nop()))
	testServer(t, client)
	to := &protoactor.PID{Address: server.Address().HostPort(), Id: "order"}
	if err := client.Send(to, nil, wrapperspb.Int64(1)); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, reconnectWait, "the first message", func() bool { return seq.has(1) })
	old := client.lastPeer.Load()
	if old == nil || old.identity != to.Address {
		t.Fatalf("last peer %v, want the server's", old)
	}
	old.mu.Lock()
	c := old.conn
	old.mu.Unlock()
	c.nc.Close() // the connection fails: its peer leaves the map
	testutil.Eventually(t, reconnectWait, "the peer to leave the map", func() bool {
		old.mu.Lock()
		defer old.mu.Unlock()
		return old.removed
	})
	if p := client.lastPeer.Load(); p != old {
		t.Fatalf("last peer %p, want the removed one %p still kept", p, old)
	}
	if err := client.Send(to, nil, wrapperspb.Int64(2)); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, reconnectWait, "the message sent after the peer left", func() bool { return seq.has(2) })
	if p := client.lastPeer.Load(); p == old {
		t.Fatal("Send still keeps the removed peer as its last")
	}
}
