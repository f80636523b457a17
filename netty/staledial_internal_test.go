package netty

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// holdNet is TCP whose dialled connections, while hold is set, keep a
// failed read or write from returning until let: the transport does not
// learn yet that such a connection is gone, as when the peer's reset is
// still on its way.
type holdNet struct {
	hold    atomic.Bool
	release chan struct{}
	once    sync.Once
}

func (n *holdNet) let() { n.once.Do(func() { close(n.release) }) }

type holdConn struct {
	*net.TCPConn
	n *holdNet
}

func (c holdConn) Read(b []byte) (int, error) {
	k, err := c.TCPConn.Read(b)
	if err != nil && k == 0 && c.n.hold.Load() {
		<-c.n.release
	}
	return k, err
}

func (c holdConn) Write(b []byte) (int, error) {
	k, err := c.TCPConn.Write(b)
	if err != nil && c.n.hold.Load() {
		<-c.n.release
	}
	return k, err
}

func (n *holdNet) Listen(network, address string) (net.Listener, error) {
	return net.Listen(network, address)
}

func (n *holdNet) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return holdConn{nc.(*net.TCPConn), n}, nil
}

type echoEndpoint struct{}

func (echoEndpoint) Receive(*actor.Context, proto.Message) error { return nil }
func (echoEndpoint) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	ctx.Reply(msg)
	return nil
}

// A driver dialled an executor; the connection dropped, and the executor
// heard of it first. Its next message dials the driver, whose old
// connection to it is still attached for a moment (the reset is on its
// way). Refused then as a duplicate, the executor waited for the driver to
// dial it, for up to spark.network.auth.rpcTimeout (30s), and every
// message to the driver waited as long, although the driver had nothing
// to send and dialled nothing. The driver now waits a moment for the old
// connection to close, as it does for an inbound connection that claims a
// live identity, and takes the new one.
func TestRedialRefusedByAStaleConnectionDoesNotStall(t *testing.T) {
	hn := &holdNet{release: make(chan struct{})}
	driverT := NewTransport(WithNetwork(hn), WithLogger(zerolog.Nop()))
	var armed atomic.Bool
	driverT.hooks.attach = func(p *peer) {
		// The executor's new connection: the old one is attached still.
		// Let the driver learn that it is gone (its close waits for the
		// peer's lock, which attach holds).
		if armed.Load() && p.conn != nil && p.conn.outbound {
			hn.let()
		}
	}
	driver := testEnv(t, "driver", nil, driverT)
	execT := NewTransport(WithLogger(zerolog.Nop()))
	exec := testEnv(t, "exec", nil, execT)
	t.Cleanup(hn.let) // before the envs' shutdown
	for _, e := range []*actor.Env{driver, exec} {
		if _, err := e.RegisterEndpoint("echo", echoEndpoint{}); err != nil {
			t.Fatal(err)
		}
	}
	ask := func(from *actor.Env, to *actor.Env, s string) error {
		ctx, cancel := context.WithTimeout(context.Background(), reconnectWait)
		defer cancel()
		_, err := from.RemoteRef(to.Address(), "echo").AskWithTimeout(ctx, wrapperspb.String(s),
			actor.RpcTimeout{Duration: time.Minute, Key: "test"}).Wait(ctx)
		return err
	}
	if err := ask(driver, exec, "launch"); err != nil { // the driver dials
		t.Fatal(err)
	}
	hn.hold.Store(true)
	armed.Store(true)
	v, ok := execT.peers.Load(driver.Identity())
	if !ok {
		t.Fatal("the executor has no peer for the driver")
	}
	p := v.(*peer)
	p.mu.Lock()
	c := p.conn
	p.mu.Unlock()
	c.close(nil) // the connection drops; the executor hears of it at once
	testutil.Eventually(t, reconnectWait, "the executor closed the connection", func() bool { return execT.Stats().Connections == 0 })
	if err := ask(exec, driver, "heartbeat"); err != nil {
		t.Fatalf("heartbeat to a live driver after a dropped connection: %v", err)
	}
}
