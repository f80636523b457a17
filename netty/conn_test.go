package netty_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// shortTimeout is the spark.network.timeout of the tests of silent peers.
const shortTimeout = 400 * time.Millisecond

func shortTimeoutConf() *actor.Conf {
	return actor.NewConf().Set(actor.KeyNetworkTimeout, fmt.Sprintf("%dms", shortTimeout.Milliseconds()))
}

// dialRaw opens n sockets to env that send nothing.
func dialRaw(t *testing.T, env *actor.Env, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.Dial("tcp", env.Address().HostPort())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	return conns
}

// A socket that connects and sends nothing costs the server a small buffer,
// not a full read buffer.
func TestIdlePreHandshakeSocketsAreCheap(t *testing.T) {
	server, tr := serverWithTransport(t, nil)
	const n = 200
	before := testutil.LiveHeap()
	conns := dialRaw(t, server, n)
	testutil.Eventually(t, waitFor, "every socket in handshake", func() bool { return tr.Stats().Handshaking == n })
	perSocket := (testutil.LiveHeap() - before) / n
	t.Logf("heap per idle socket in handshake: %d bytes", perSocket)
	if perSocket > 16<<10 {
		t.Fatalf("heap per idle socket in handshake: %d bytes, want at most 16 KiB", perSocket)
	}
	for _, c := range conns {
		c.Close()
	}
	testutil.Eventually(t, waitFor, "the sockets to be dropped", func() bool { return tr.Stats().Handshaking == 0 })
}

// A handshake that does not finish within spark.network.auth.rpcTimeout
// closes the connection.
func TestSlowHandshakeCloses(t *testing.T) {
	server, tr := serverWithTransport(t, actor.NewConf().Set(netty.KeyAuthTimeout, "300ms"))
	register(t, server, "echo", newEcho())
	c := dialRaw(t, server, 1)[0]
	if _, err := c.Write([]byte{0, 0, 0, 40, 8}); err != nil { // part of a hello
		t.Fatal(err)
	}
	expectClosed(t, c)
	testutil.Eventually(t, waitFor, "the connection to be counted", func() bool { return tr.Stats().ProtocolErrors == 1 && tr.Stats().Handshaking == 0 })
	stillServes(t, server)
}

// Connections past spark.rpc.netty.maxPendingHandshakes are refused at once
// and told why; once one handshake ends, connections are accepted again.
func TestPendingHandshakeCap(t *testing.T) {
	const limit = 4
	server, tr := serverWithTransport(t, actor.NewConf().Set(netty.KeyMaxPendingHandshakes, fmt.Sprint(limit)))
	register(t, server, "echo", newEcho())
	pending := dialRaw(t, server, limit)
	testutil.Eventually(t, waitFor, "the sockets in handshake", func() bool { return tr.Stats().Handshaking == limit })
	for i := range 3 {
		c := dialRaw(t, server, 1)[0]
		c.SetDeadline(time.Now().Add(waitFor)) //nolint:errcheck
		var reply messages.HandshakeReply
		readMsg(t, bufio.NewReader(c), &reply)
		if reply.Error != "too many connections in handshake (spark.rpc.netty.maxPendingHandshakes)" {
			t.Fatalf("refusal %d: %v", i, &reply)
		}
		expectClosed(t, c)
	}
	if st := tr.Stats(); st.Refused != 3 || st.Handshaking != limit {
		t.Fatalf("stats %+v: want 3 refused, %d in handshake", st, limit)
	}
	pending[0].Close()
	testutil.Eventually(t, waitFor, "a free handshake slot", func() bool { return tr.Stats().Handshaking < limit })
	stillServes(t, server)
}

// A peer that sends part of a frame after a good handshake and stops has
// its connection closed after the connection timeout; others are served.
func TestStalledFrameCloses(t *testing.T) {
	server, tr := serverWithTransport(t, shortTimeoutConf())
	register(t, server, "echo", newEcho())
	c, _ := rawClient(t, server, "client-stall")
	if _, err := c.Write(append(binary.BigEndian.AppendUint32(nil, 100), 0x0a, 4, 'e', 'c')); err != nil {
		t.Fatal(err)
	}
	expectClosed(t, c)
	testutil.Eventually(t, waitFor, "the timeout to be counted", func() bool { return tr.Stats().TimedOut == 1 })
	stillServes(t, server)
}

// fakePeer is a listening peer played by hand: it completes the handshake
// of the env that dials it and then does what the test says.
type fakePeer struct {
	t  *testing.T
	ln net.Listener
}

func newFakePeer(t *testing.T) *fakePeer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return &fakePeer{t: t, ln: ln}
}

func (f *fakePeer) addr() actor.RpcAddress {
	a, err := actor.ParseHostPort(f.ln.Addr().String())
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

// accept takes the next connection, answers its handshake and returns it.
func (f *fakePeer) accept() (net.Conn, *bufio.Reader) {
	t := f.t
	t.Helper()
	f.ln.(*net.TCPListener).SetDeadline(time.Now().Add(waitFor)) //nolint:errcheck
	c, err := f.ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(waitFor)) //nolint:errcheck
	r := bufio.NewReader(c)
	var hello messages.Handshake
	readMsg(t, r, &hello)
	if !hello.ClientMode {
		writeMsg(t, c, &messages.HandshakeReply{Version: netty.ProtocolVersion, Identity: f.ln.Addr().String()})
		return c, r
	}
	// A client proves its key: challenge it and take its signature.
	writeMsg(t, c, &messages.HandshakeReply{Version: netty.ProtocolVersion, Identity: f.ln.Addr().String(), Nonce: make([]byte, 32)})
	var p messages.HandshakeProof
	readMsg(t, r, &p)
	writeMsg(t, c, &messages.HandshakeResult{})
	return c, r
}

// clientWithTransport starts a client-mode env with a short connection
// timeout and returns it with its transport.
func clientWithTransport(t *testing.T) (*actor.Env, *netty.Transport) {
	t.Helper()
	tr := netty.NewTransport(netty.WithLogger(testLogger(t)), netty.WithClientMode())
	env, err := actor.NewEnv("client", shortTimeoutConf(), actor.WithTransport(tr), actor.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, env) })
	return env, tr
}

// longAsk asks with a timeout far longer than the connection timeout, so
// that a failure within the test's bound comes from the connection.
func longAsk(ref *actor.Ref, s string) *actor.Future {
	return ref.AskWithTimeout(context.Background(), str(s), actor.RpcTimeout{Duration: time.Minute, Key: "test.askTimeout"})
}

func connectionTimeout(t *testing.T, f *actor.Future) *netty.ConnectionTimeoutError {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := f.Result()
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(waitFor):
		t.Fatal("the ask did not fail")
	}
	var te *netty.ConnectionTimeoutError
	if !errors.As(err, &te) || !errors.Is(err, actor.ErrConnectionClosed) {
		t.Fatalf("ask failed with %v, want a ConnectionTimeoutError", err)
	}
	if te.Key != actor.KeyNetworkTimeout || te.Duration != shortTimeout {
		t.Fatalf("timeout error %+v", te)
	}
	return te
}

// A peer that stalls in the middle of a frame: the connection closes after
// the connection timeout and the ask pending on it fails at once, while the
// env's other connections keep working.
func TestStalledFrameFailsPendingAsks(t *testing.T) {
	good := newEnv(t, "good", nil)
	register(t, good, "echo", newEcho())
	client, tr := clientWithTransport(t)
	goodRef := client.RemoteRef(good.Address(), "echo")
	if got := askString(t, goodRef, "before"); got != "before" {
		t.Fatalf("got %q", got)
	}
	peer := newFakePeer(t)
	f := longAsk(client.RemoteRef(peer.addr(), "sink"), "hello")
	c, r := peer.accept()
	var ask messages.WireEnvelope
	readMsg(t, r, &ask)
	if _, err := c.Write(append(binary.BigEndian.AppendUint32(nil, 100), 0x0a, 4)); err != nil {
		t.Fatal(err)
	}
	if te := connectionTimeout(t, f); !te.MidFrame {
		t.Fatalf("timeout error %+v: want MidFrame", te)
	}
	expectClosed(t, c)
	if got := askString(t, goodRef, "after"); got != "after" {
		t.Fatalf("got %q", got)
	}
	if st := tr.Stats(); st.TimedOut != 1 || st.Connections != 1 {
		t.Fatalf("stats %+v: want 1 timed out, 1 connection left", st)
	}
}

// A connection on which an ask waits and nothing arrives for the connection
// timeout is closed (Spark: "quiet ... while there are outstanding
// requests") and the ask fails.
func TestQuietConnectionWithOutstandingAskCloses(t *testing.T) {
	client, tr := clientWithTransport(t)
	peer := newFakePeer(t)
	f := longAsk(client.RemoteRef(peer.addr(), "sink"), "hello")
	c, r := peer.accept()
	var ask messages.WireEnvelope
	readMsg(t, r, &ask)
	if te := connectionTimeout(t, f); te.MidFrame || te.Outstanding != 1 {
		t.Fatalf("timeout error %+v: want 1 outstanding, not mid-frame", te)
	}
	expectClosed(t, c)
	if st := tr.Stats(); st.TimedOut != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// A connection with nothing outstanding stays open however long it is
// quiet, and keeps delivering.
func TestQuietConnectionWithoutAsksStaysOpen(t *testing.T) {
	client, tr := clientWithTransport(t)
	inbox := newEcho()
	register(t, client, "inbox", inbox)
	peer := newFakePeer(t)
	if err := client.RemoteRef(peer.addr(), "sink").Send(str("one-way")); err != nil {
		t.Fatal(err)
	}
	c, r := peer.accept()
	var msg messages.WireEnvelope
	readMsg(t, r, &msg)
	// Quiet for several connection timeouts: the read must time out here,
	// not see the connection close.
	c.SetReadDeadline(time.Now().Add(4 * shortTimeout)) //nolint:errcheck
	var ne net.Error
	if _, err := c.Read(make([]byte, 1)); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("quiet connection: read %v, want a timeout", err)
	}
	payload, _ := proto.Marshal(str("still open"))
	writeMsg(t, c, &messages.WireEnvelope{Target: "inbox", Type: "google.protobuf.StringValue", Payload: payload})
	if got := testutil.Recv(t, inbox.got, waitFor, "a message").(*wrapperspb.StringValue).GetValue(); got != "still open" {
		t.Fatalf("got %q", got)
	}
	if st := tr.Stats(); st.TimedOut != 0 || st.Connections != 1 {
		t.Fatalf("stats %+v", st)
	}
}
