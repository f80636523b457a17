package netty_test

import (
	"fmt"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
)

// A connection refused at spark.rpc.netty.maxConnections leaves nothing
// behind: peers that come and go, refused ones included, leave the
// transport's tables (a client id costs a peer one key to make). Before,
// each refused connection left its peer in the table for ever.
func TestRefusedConnectionsLeaveNoPeers(t *testing.T) {
	server, tr := serverWithTransport(t, actor.NewConf().Set(netty.KeyMaxConnections, "1"))
	register(t, server, "echo", newEcho())
	rawClient(t, server, "admitted")
	const n = 200
	for i := range n {
		c, _, err := rawClientFrom(t, server, fmt.Sprintf("refused-%d", i), "")
		if err == nil {
			t.Fatalf("connection %d past the cap was admitted", i)
		}
		c.Close()
	}
	if got := len(tr.PeerStats()); got != 1 {
		t.Fatalf("%d peers after %d refused connections and 1 admitted, want 1", got, n)
	}
}
