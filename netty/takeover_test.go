package netty_test

import (
	"bufio"
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

// holder holds every ask until its gate opens, then echoes it; held tells
// when an ask arrived.
type holder struct {
	*testutil.Gate
	held chan struct{}
}

func newHolder(t *testing.T) *holder {
	return &holder{Gate: testutil.NewGate(t), held: make(chan struct{}, 16)}
}

func (g *holder) Receive(*actor.Context, proto.Message) error { return nil }

func (g *holder) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	g.held <- struct{}{}
	<-g.Opened()
	ctx.Reply(msg)
	return nil
}

func (g *holder) waitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-g.held:
	case <-time.After(waitFor):
		t.Fatal("the ask did not arrive")
	}
}

// claimIdentity connects to server and sends a hello that claims id, as a
// peer that knows nothing but the identity. It returns the acceptor's
// reply and the connection.
func claimIdentity(t *testing.T, server *actor.Env, id string, clientMode bool) (*messages.HandshakeReply, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", server.Address().HostPort())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(waitFor)) //nolint:errcheck
	writeMsg(t, c, &messages.Handshake{Version: netty.ProtocolVersion, Identity: id, ClientMode: clientMode})
	var reply messages.HandshakeReply
	readMsg(t, bufio.NewReader(c), &reply)
	return &reply, c
}

// askResult waits for f and returns its reply's text, or fails t.
func askResult(t *testing.T, f *actor.Future) string {
	t.Helper()
	m, err := f.Wait(testutil.Context(t, waitFor))
	if err != nil {
		t.Fatalf("the victim's ask failed: %v", err)
	}
	return m.(*wrapperspb.StringValue).GetValue()
}

// A peer that claims the identity of a connected client-mode env does not
// replace its connection: the client's pending ask is answered to the
// client, and the impostor is refused.
func TestClientIdentityCannotBeTakenOver(t *testing.T) {
	server, tr := serverWithTransport(t, nil)
	g := newHolder(t)
	register(t, server, "gate", g)
	client, ctr := clientWithTransport(t)
	victim := ctr.Info().Identity
	f := longAsk(client.RemoteRef(server.Address(), "gate"), "for the client")
	g.waitHeld(t)

	reply, c := claimIdentity(t, server, victim, true)
	if reply.Error == "" {
		t.Errorf("an impostor of client %s was accepted: %v", victim, reply)
	}
	g.Open()
	if got := askResult(t, f); got != "for the client" {
		t.Fatalf("the client got %q", got)
	}
	expectClosed(t, c)
	if st := tr.Stats(); st.AuthFailures == 0 {
		t.Errorf("stats %+v: the impostor is not counted", st)
	}
}

// A peer that claims the listening identity of a connected env does not
// replace its connection: the env's pending ask is answered to it, sends
// to it still reach it, and the impostor is refused.
func TestListeningIdentityCannotBeTakenOver(t *testing.T) {
	server, tr := serverWithTransport(t, nil)
	g := newHolder(t)
	register(t, server, "gate", g)
	nm := newEnv(t, "nodemanager", nil)
	sink := newEcho()
	register(t, nm, "sink", sink)
	f := longAsk(nm.RemoteRef(server.Address(), "gate"), "for the node manager")
	g.waitHeld(t)

	reply, c := claimIdentity(t, server, nm.Address().HostPort(), false)
	if reply.Error == "" {
		t.Errorf("an impostor of %s was accepted: %v", nm.Address(), reply)
	}
	g.Open()
	if got := askResult(t, f); got != "for the node manager" {
		t.Fatalf("the node manager got %q", got)
	}
	if err := server.RemoteRef(nm.Address(), "sink").Send(str("container start")); err != nil {
		t.Fatal(err)
	}
	if got := testutil.Recv(t, sink.got, waitFor, "a message").(*wrapperspb.StringValue).GetValue(); got != "container start" {
		t.Fatalf("the node manager got %q", got)
	}
	expectClosed(t, c)
	if st := tr.Stats(); st.IdentityInUse != 1 {
		t.Errorf("stats %+v: want the impostor counted in IdentityInUse", st)
	}
}

// An env that restarts at the same address gets back in at once: its old
// connection's end reaches the acceptor, which then takes the new one.
func TestRestartedPeerGetsBackIn(t *testing.T) {
	server := newEnv(t, "server", nil)
	register(t, server, "echo", newEcho())
	first := newEnv(t, "worker", nil)
	port := first.Address().Port
	if got := askString(t, first.RemoteRef(server.Address(), "echo"), "before"); got != "before" {
		t.Fatalf("got %q", got)
	}
	shutdown(t, first)
	for round := range 3 {
		again := newEnv(t, "worker", nil, netty.WithPort(port))
		if again.Address() != first.Address() {
			t.Fatalf("restarted at %s, want %s", again.Address(), first.Address())
		}
		sink := newEcho()
		register(t, again, "sink", sink)
		start := time.Now()
		_, err := again.RemoteRef(server.Address(), "echo").AskSyncWithTimeout(testutil.Context(t, waitFor), str("after"),
			actor.RpcTimeout{Duration: 3 * time.Second, Key: "test.timeout"})
		if err != nil {
			t.Fatalf("round %d: the restarted env's ask: %v", round, err)
		}
		t.Logf("round %d: back in after %s", round, time.Since(start))
		if err := server.RemoteRef(again.Address(), "sink").Send(str("to the new one")); err != nil {
			t.Fatal(err)
		}
		testutil.Recv(t, sink.got, waitFor, "a message")
		shutdown(t, again)
	}
}

// A connection that this env dialled reached whoever listens at the
// address, so it wins over an inbound connection that claimed that
// address while the dial was under way: what this env sends next goes to
// the real listener, and the impostor's connection is closed.
func TestDialledConnectionWinsOverAClaim(t *testing.T) {
	server, _ := serverWithTransport(t, nil)
	// A listener whose identity sorts before the server's, so that an
	// inbound claim of it wins over the server's dial in the crossing-dial
	// rule.
	var real *fakePeer
	for range 50 {
		f := newFakePeer(t)
		if f.addr().HostPort() < server.Address().HostPort() {
			real = f
			break
		}
		f.ln.Close()
	}
	if real == nil {
		t.Skip("no listening port sorts before the server's")
	}
	ref := server.RemoteRef(real.addr(), "sink")
	if err := ref.Send(str("first")); err != nil {
		t.Fatal(err)
	}
	real.ln.(*net.TCPListener).SetDeadline(time.Now().Add(waitFor)) //nolint:errcheck
	rc, err := real.ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rc.SetDeadline(time.Now().Add(waitFor)) //nolint:errcheck
	rr := bufio.NewReader(rc)
	var hello messages.Handshake
	readMsg(t, rr, &hello)

	// While the server waits for the real listener's answer, an impostor
	// claims the listener's address.
	reply, impostor := claimIdentity(t, server, real.addr().HostPort(), false)
	if reply.Error != "" {
		t.Fatalf("the claim was refused before the dial completed (%s): the test needs it accepted", reply.Error)
	}
	writeMsg(t, rc, &messages.HandshakeReply{Version: netty.ProtocolVersion, Identity: real.addr().HostPort()})
	expectClosed(t, impostor)
	if err := ref.Send(str("second")); err != nil {
		t.Fatal(err)
	}
	for {
		var env messages.WireEnvelope
		readMsg(t, rr, &env)
		if env.GetTarget() == "credit$" {
			continue // the dialer's offer of endpoint credit
		}
		var s wrapperspb.StringValue
		if err := proto.Unmarshal(env.Payload, &s); err != nil {
			t.Fatal(err)
		}
		if s.GetValue() == "second" {
			return
		}
	}
}
