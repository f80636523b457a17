package netty_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// closeGateNetwork is TCP whose first dialled connection to be closed
// closes its socket, then holds the transport in Close until the test
// opens the gate: the point at which the transport has decided to close a
// connection and has not yet taken it from its peer.
type closeGateNetwork struct {
	once    sync.Once
	closing chan struct{} // closed when the first Close has closed its socket
	gate    chan struct{} // closed by the test
	open    sync.Once
}

func newCloseGateNetwork(t *testing.T) *closeGateNetwork {
	n := &closeGateNetwork{closing: make(chan struct{}), gate: make(chan struct{})}
	t.Cleanup(n.openGate) // before the envs' shutdown (cleanups run last first)
	return n
}

func (n *closeGateNetwork) openGate() { n.open.Do(func() { close(n.gate) }) }

func (n *closeGateNetwork) Listen(network, address string) (net.Listener, error) {
	return net.Listen(network, address)
}

func (n *closeGateNetwork) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &closeGateConn{Conn: nc, n: n}, nil
}

type closeGateConn struct {
	net.Conn
	n *closeGateNetwork
}

func (c *closeGateConn) Close() error {
	err := c.Conn.Close()
	first := false
	c.n.once.Do(func() { first = true })
	if first {
		close(c.n.closing)
		<-c.n.gate
	}
	return err
}

// An idle connection closed by spark.rpc.io.idleTimeout loses nothing: a
// message sent while the close is under way is sent, over the connection
// that the next Send dials, not dropped. Before, it was queued on the
// connection being closed, and dropped with it.
func TestIdleCloseLosesNothingSentDuringIt(t *testing.T) {
	gn := newCloseGateNetwork(t)
	server := newEnv(t, "server", actor.NewConf().Set(netty.KeyIdleTimeout, "0"))
	sink := newEcho()
	register(t, server, "sink", sink)
	worker := newEnv(t, "worker", actor.NewConf().Set(netty.KeyIdleTimeout, "200ms"), netty.WithNetwork(gn))
	ref := worker.RemoteRef(server.Address(), "sink")
	if err := ref.Send(str("before")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sink.got:
	case <-time.After(waitFor):
		t.Fatal("the first message did not arrive")
	}
	select {
	case <-gn.closing: // the worker closes the idle connection
	case <-time.After(waitFor):
		t.Fatal("the idle connection was not closed")
	}
	if err := ref.Send(str("during the idle close")); err != nil {
		t.Fatalf("Send during the idle close: %v", err)
	}
	gn.openGate()
	testutil.Eventually(t, waitFor, "the message delivered or dropped", func() bool {
		return len(sink.got) > 0 || worker.Dropped() > 0
	})
	if d := worker.Dropped(); d > 0 {
		t.Fatalf("the idle close dropped %d message(s) sent while it was under way", d)
	}
	if got := (<-sink.got).(*wrapperspb.StringValue).GetValue(); got != "during the idle close" {
		t.Fatalf("got %q", got)
	}
}
