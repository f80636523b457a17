package netty_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// peerGateNet is TCP whose accepted connections, once armed, hold their
// Close until the test releases it: the moment between the transport's
// decision to close a connection and the socket's close, which on a real
// network lasts at least until the peer hears of it.
type peerGateNet struct {
	armed   atomic.Bool
	closing chan struct{}
	release chan struct{}
}

type peerGateConn struct {
	*net.TCPConn
	g *peerGateNet
}

// hold holds the first close (or half-close) once armed.
func (g *peerGateNet) hold() {
	if g.armed.CompareAndSwap(true, false) {
		g.closing <- struct{}{}
		<-g.release
	}
}

func (c peerGateConn) Close() error {
	c.g.hold()
	return c.TCPConn.Close()
}

func (c peerGateConn) CloseWrite() error {
	c.g.hold()
	return c.TCPConn.CloseWrite()
}

type peerGateListener struct {
	net.Listener
	g *peerGateNet
}

func (l peerGateListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return peerGateConn{nc.(*net.TCPConn), l.g}, nil
}

func (g *peerGateNet) Listen(network, address string) (net.Listener, error) {
	l, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	return peerGateListener{l, g}, nil
}

func (g *peerGateNet) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

// orderSink records, in its mailbox's order, the messages it gets and the
// disconnects it is told of.
type orderSink struct{ ch chan string }

func (s *orderSink) Receive(_ *actor.Context, msg proto.Message) error {
	s.ch <- msg.(*wrapperspb.StringValue).GetValue()
	return nil
}

func (s *orderSink) OnDisconnected(*actor.Context, actor.RpcAddress) error {
	s.ch <- "disconnected"
	return nil
}

// An idle close "loses nothing" (IdleTimeoutError, the package doc): a
// message the peer sent before it could hear of the close is delivered
// (or, were it not written, reported dropped), not lost in the reset of a
// socket closed with it unread. peerGateNet holds the side that found the
// connection idle at its close, the moment that on a real network lasts
// until the peer hears of it. Before, the side that found the connection
// idle closed its socket with the frame unread, the reset threw it away,
// and the sender's Send had returned nil with nothing reported dropped.
func TestIdleCloseLosesNothingThePeerSentAsItClosed(t *testing.T) {
	g := &peerGateNet{closing: make(chan struct{}), release: make(chan struct{})}
	b := newEnv(t, "b", actor.NewConf().Set(netty.KeyIdleTimeout, "300ms"), netty.WithNetwork(g))
	at := netty.NewTransport(netty.WithLogger(testLogger(t)))
	a, err := actor.NewEnv("a", actor.NewConf().Set(netty.KeyIdleTimeout, "0"), actor.WithTransport(at))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, a) })
	release := sync.OnceFunc(func() { close(g.release) })
	t.Cleanup(release) // before the envs' shutdown
	sink := &orderSink{ch: make(chan string, 16)}
	register(t, b, "sink", sink)
	ref := lookup(t, a, b.Address(), "sink")
	if err := ref.Send(str("first")); err != nil {
		t.Fatal(err)
	}
	if got := <-sink.ch; got != "first" {
		t.Fatalf("got %q", got)
	}
	g.armed.Store(true)
	select {
	case <-g.closing: // b found the connection idle and closes it
	case <-time.After(waitFor):
		t.Fatal("b never closed the idle connection")
	}
	sent := func() uint64 {
		var n uint64
		for _, ps := range at.PeerStats() {
			n += ps.SentBytes
		}
		return n
	}
	before := sent()
	if err := ref.Send(str("second")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	testutil.Eventually(t, waitFor, "a wrote the message", func() bool { return sent() > before })
	release()
	var got []string
	for ev := ""; ev != "disconnected"; {
		select {
		case ev = <-sink.ch:
			got = append(got, ev)
		case <-time.After(waitFor):
			t.Fatalf("b never reported the disconnect; got %q", got)
		}
	}
	if len(got) != 2 || got[0] != "second" {
		t.Fatalf("b's sink got %q, want [second disconnected]: a's Send returned nil, its message was lost with the idle connection, and a reports no drop (Dropped=%d)",
			got, a.Dropped())
	}
}
