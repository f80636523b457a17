package netty_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
)

// staleNet is TCP on which the test can reset the connections an env
// accepted and, while holdReads is set (until let), hold the failed reads
// and writes of the connections it dialled, so that the env does not
// notice for a while that such a connection is gone, as on a network where
// the peer's reset is late.
type staleNet struct {
	holdReads atomic.Bool
	release   chan struct{} // closed by let
	once      sync.Once
	refused   chan struct{} // an accepted connection closed (refused)

	mu       sync.Mutex
	accepted []net.Conn
}

func newStaleNet() *staleNet {
	return &staleNet{release: make(chan struct{}), refused: make(chan struct{}, 16)}
}

type staleAccepted struct {
	*net.TCPConn
	n *staleNet
}

func (c staleAccepted) Close() error {
	select {
	case c.n.refused <- struct{}{}:
	default:
	}
	return c.TCPConn.Close()
}

type staleDialled struct {
	*net.TCPConn
	n *staleNet
}

// let ends the hold.
func (n *staleNet) let() { n.once.Do(func() { close(n.release) }) }

func (c staleDialled) Write(b []byte) (int, error) {
	n, err := c.TCPConn.Write(b)
	if err != nil && c.n.holdReads.Load() {
		<-c.n.release
	}
	return n, err
}

func (c staleDialled) Read(b []byte) (int, error) {
	n, err := c.TCPConn.Read(b)
	if err != nil && n == 0 && c.n.holdReads.Load() {
		<-c.n.release
	}
	return n, err
}

type staleListener struct {
	net.Listener
	n *staleNet
}

func (l staleListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.n.mu.Lock()
	l.n.accepted = append(l.n.accepted, nc)
	l.n.mu.Unlock()
	return staleAccepted{nc.(*net.TCPConn), l.n}, nil
}

func (n *staleNet) Listen(network, address string) (net.Listener, error) {
	l, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	return staleListener{l, n}, nil
}

func (n *staleNet) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return staleDialled{nc.(*net.TCPConn), n}, nil
}

// resetAccepted resets every connection accepted so far.
func (n *staleNet) resetAccepted() {
	n.mu.Lock()
	cs := n.accepted
	n.accepted = nil
	n.mu.Unlock()
	for _, c := range cs {
		_ = c.(*net.TCPConn).SetLinger(0)
		_ = c.Close()
	}
}

// Two listening envs whose connection dropped and that both send to each
// other again reconnect at once. Here the one with the smaller identity
// (low) dials first and is refused by the other (high), which has not yet
// noticed that its old connection is gone; low's dial then waits for
// high's connection. high, once it noticed, dials low, and low refuses it
// because it is "dialling" with the smaller identity: each waits for the
// other's connection until spark.network.auth.rpcTimeout (30s) passes, and
// every message between them waited that long. Now the dial that waits
// accepts the connection it waits for, and a dial that was to win, refused
// in turn, dials again.
func TestCrossedRedialsDoNotStallForTheHandshakeTimeout(t *testing.T) {
	n1, n2 := newStaleNet(), newStaleNet()
	t1 := netty.NewTransport(netty.WithNetwork(n1), netty.WithLogger(testLogger(t)))
	t2 := netty.NewTransport(netty.WithNetwork(n2), netty.WithLogger(testLogger(t)))
	e1, err := actor.NewEnv("e1", nil, actor.WithTransport(t1))
	if err != nil {
		t.Fatal(err)
	}
	e2, err := actor.NewEnv("e2", nil, actor.WithTransport(t2))
	if err != nil {
		t.Fatal(err)
	}
	low, high, lowT, highT, lowNet, highNet := e1, e2, t1, t2, n1, n2
	if e2.Identity() < e1.Identity() {
		low, high, lowT, highT, lowNet, highNet = e2, e1, t2, t1, n2, n1
	}
	t.Cleanup(func() { shutdown(t, low); shutdown(t, high) })
	t.Cleanup(highNet.let) // runs first
	register(t, low, "echo", newEcho())
	register(t, high, "echo", newEcho())
	toLow := high.RemoteRef(low.Address(), "echo")
	toHigh := low.RemoteRef(high.Address(), "echo")

	// high dials low: the connection is high's outbound one.
	askString(t, toLow, "hello")
	// It drops; low notices at once, high does not yet.
	highNet.holdReads.Store(true)
	lowNet.resetAccepted()
	testutil.Eventually(t, waitFor, "low closed the connection", func() bool { return lowT.Stats().Connections == 0 })

	// low dials high, which refuses it: it has a connection to low.
	fLow := toHigh.Ask(testutil.Context(t, time.Minute), str("from low"))
	select {
	case <-highNet.refused:
	case <-time.After(waitFor):
		t.Fatal("high did not refuse low's dial")
	}
	// high notices the drop, and sends to low.
	highNet.let()
	testutil.Eventually(t, waitFor, "high closed the connection", func() bool { return highT.Stats().Connections == 0 })
	fHigh := toLow.Ask(testutil.Context(t, time.Minute), str("from high"))

	for _, f := range []*actor.Future{fLow, fHigh} {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		_, err := f.Wait(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("an ask between two live envs still waits %s after a reconnect (low %s: %+v; high %s: %+v)",
				waitFor, low.Identity(), lowT.Stats(), high.Identity(), highT.Stats())
		}
	}
}
