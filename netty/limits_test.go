package netty_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
)

// Loopback addresses other than 127.0.0.1 play other hosts (Linux routes
// all of 127.0.0.0/8 to the loopback interface).
const (
	hostB = "127.0.0.2"
	hostC = "127.0.0.3"
)

// expectRefused reads the refusal an acceptor sends at accept and checks
// that it names key; the connection must then close.
func expectRefused(t *testing.T, c net.Conn, key string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(waitFor)) //nolint:errcheck
	var reply messages.HandshakeReply
	readMsg(t, bufio.NewReader(c), &reply)
	if !strings.Contains(reply.Error, key) {
		t.Fatalf("refusal %q does not name %s", reply.Error, key)
	}
	expectClosed(t, c)
}

// An inbound connection that completes its handshake and then sends
// nothing is closed after spark.rpc.io.connectionTimeout; one that sent
// something and then went idle is closed after spark.rpc.io.idleTimeout.
// Neither stays open for ever.
func TestIdleInboundConnectionsClose(t *testing.T) {
	server, tr := serverWithTransport(t, shortTimeoutConf().Set(netty.KeyIdleTimeout, "600ms"))
	register(t, server, "echo", newEcho())
	const n = 50
	conns := make([]net.Conn, 0, n+1)
	for i := range n {
		c, _ := rawClient(t, server, fmt.Sprintf("silent-%d", i))
		conns = append(conns, c)
	}
	used, _ := rawClient(t, server, "used")
	writeMsg(t, used, &messages.WireEnvelope{Target: "echo", Type: "google.protobuf.StringValue", Payload: []byte{10, 1, 'x'}})
	conns = append(conns, used)
	for _, c := range conns {
		expectClosed(t, c)
	}
	testutil.Eventually(t, waitFor, "the closes counted", func() bool {
		st := tr.Stats()
		return st.IdleClosed == n+1 && st.Connections == 0
	})
	if st := tr.Stats(); st.TimedOut != 0 || st.ProtocolErrors != 0 {
		t.Fatalf("stats %+v: idle closes counted as failures", st)
	}
	stillServes(t, server)
}

// Closing an idle connection between two listening envs is harmless: the
// next ask dials again.
func TestIdleCloseIsHarmless(t *testing.T) {
	conf := func() *actor.Conf { return actor.NewConf().Set(netty.KeyIdleTimeout, "300ms") }
	server, str1 := serverWithTransport(t, conf())
	register(t, server, "echo", newEcho())
	tr := netty.NewTransport(netty.WithLogger(testLogger(t)))
	worker, err := actor.NewEnv("worker", conf(), actor.WithTransport(tr), actor.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, worker) })
	ref := worker.RemoteRef(server.Address(), "echo")
	for i := range 3 {
		if got := askString(t, ref, fmt.Sprint(i)); got != fmt.Sprint(i) {
			t.Fatalf("ask %d: got %q", i, got)
		}
		testutil.Eventually(t, waitFor, "the idle connection closed", func() bool {
			return tr.Stats().Connections == 0 && str1.Stats().Connections == 0
		})
	}
	if st, st1 := tr.Stats(), str1.Stats(); st.IdleClosed+st1.IdleClosed < 3 {
		t.Fatalf("stats %+v, %+v: want 3 idle closes", st, st1)
	}
}

// Established connections are capped per source address and in total; a
// peer that reconnects at the cap replaces its own connection, and other
// addresses still get in at the per-address cap.
func TestEstablishedConnectionLimits(t *testing.T) {
	t.Run("per address", func(t *testing.T) {
		server, tr := serverWithTransport(t, actor.NewConf().Set(netty.KeyMaxConnectionsPerAddress, "3"))
		register(t, server, "echo", newEcho())
		for i := range 3 {
			if _, _, err := rawClientFrom(t, server, fmt.Sprintf("b-%d", i), hostB); err != nil {
				t.Fatalf("connection %d from %s: %v", i, hostB, err)
			}
		}
		c, _, err := rawClientFrom(t, server, "b-3", hostB)
		if err == nil || !strings.Contains(err.Error(), netty.KeyMaxConnectionsPerAddress) {
			t.Fatalf("connection past the cap: %v, want a refusal naming %s", err, netty.KeyMaxConnectionsPerAddress)
		}
		expectClosed(t, c)
		// A reconnect at the cap replaces the peer's own connection.
		if _, _, err := rawClientFrom(t, server, "b-0", hostB); err != nil {
			t.Fatalf("reconnect at the cap: %v", err)
		}
		stillServes(t, server) // from 127.0.0.1
		testutil.Eventually(t, waitFor, "the refusal counted", func() bool { return tr.Stats().RefusedConnections == 1 })
	})
	t.Run("total", func(t *testing.T) {
		server, tr := serverWithTransport(t, actor.NewConf().Set(netty.KeyMaxConnections, "2"))
		register(t, server, "echo", newEcho())
		rawClientFrom(t, server, "b", hostB) //nolint:errcheck // checked below
		rawClientFrom(t, server, "c", hostC) //nolint:errcheck
		testutil.Eventually(t, waitFor, "two connections", func() bool { return tr.Stats().Connections == 2 })
		client := newClientEnv(t, "late", nil)
		_, err := client.RemoteRef(server.Address(), "echo").AskSync(testutil.Context(t, waitFor), str("x"))
		if !errors.Is(err, netty.ErrTooManyConnections) || !strings.Contains(err.Error(), netty.KeyMaxConnections) {
			t.Fatalf("ask past the cap: %v, want ErrTooManyConnections naming %s", err, netty.KeyMaxConnections)
		}
		testutil.Eventually(t, waitFor, "the refusal counted", func() bool { return tr.Stats().RefusedConnections == 1 })
	})
}

// Handshakes are capped per source address: one host's idle sockets do not
// take the slots of another's.
func TestPendingHandshakesPerAddress(t *testing.T) {
	server, tr := serverWithTransport(t, actor.NewConf().Set(netty.KeyMaxPendingHandshakesPerAddress, "4"))
	register(t, server, "echo", newEcho())
	for range 4 {
		dialFrom(t, server, hostB)
	}
	testutil.Eventually(t, waitFor, "the sockets in handshake", func() bool { return tr.Stats().Handshaking == 4 })
	expectRefused(t, dialFrom(t, server, hostB), netty.KeyMaxPendingHandshakesPerAddress)
	stillServes(t, server)
	if st := tr.Stats(); st.Refused != 1 {
		t.Fatalf("stats %+v: want 1 refused", st)
	}
}

// A flood of idle sockets and of slow handshakes from other hosts does not
// lock a legitimate peer out: it connects and asks within its timeout, and
// every socket of the flood is closed, within the handshake timeout.
func TestFloodDoesNotLockPeersOut(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 4000 sockets")
	}
	const n = 2000
	if l := openFileLimit(); l >= 0 && l < 3*n {
		t.Skipf("the flood needs about %d open files; ulimit -n is %d", 3*n, l)
	}
	const hsTimeout = 4 * time.Second
	server, tr := serverWithTransport(t, actor.NewConf().Set(netty.KeyAuthTimeout, hsTimeout.String()))
	register(t, server, "echo", newEcho())
	start := time.Now()
	flood := make([]net.Conn, 0, 2*n)
	for range n {
		flood = append(flood, dialFrom(t, server, hostB)) // idle
		c := dialFrom(t, server, hostC)                   // a handshake that never ends
		c.Write([]byte{0, 0, 0})                          //nolint:errcheck // refused ones may be closed already
		flood = append(flood, c)
	}
	t.Logf("flood of %d sockets opened in %s; stats %+v", len(flood), time.Since(start), tr.Stats())

	client := newClientEnv(t, "legit", nil)
	asked := time.Now()
	_, err := client.RemoteRef(server.Address(), "echo").AskSyncWithTimeout(testutil.Context(t, waitFor), str("let me in"),
		actor.RpcTimeout{Duration: 5 * time.Second, Key: "test.askTimeout"})
	if err != nil {
		t.Fatalf("the legitimate peer's ask during the flood: %v (stats %+v)", err, tr.Stats())
	}
	t.Logf("legitimate ask answered in %s", time.Since(asked))

	// Every flood socket closes: refused at once, or at the handshake timeout.
	deadline := start.Add(hsTimeout + waitFor)
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := 0
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := i; j < len(flood); j += 16 {
				c := flood[j]
				c.SetReadDeadline(deadline) //nolint:errcheck
				_, err := io.Copy(io.Discard, c)
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					mu.Lock()
					open++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if open > 0 {
		t.Fatalf("%d flood sockets still open after %s", open, time.Since(start))
	}
	testutil.Eventually(t, waitFor, "the handshakes ended", func() bool { return tr.Stats().Handshaking == 0 })
	st := tr.Stats()
	t.Logf("stats %+v after %s", st, time.Since(start))
	if st.Refused == 0 || st.Refused+st.ProtocolErrors != 2*n {
		t.Fatalf("stats %+v: want every flood socket refused or closed as a failed handshake", st)
	}
}

// Refusals are counted one by one but logged at most once per interval,
// naming the key.
func TestRefusalsAreLoggedOncePerInterval(t *testing.T) {
	var logs syncBuffer
	tr := netty.NewTransport(netty.WithLogger(zerolog.New(&logs)))
	server, err := actor.NewEnv("server", actor.NewConf().Set(netty.KeyMaxPendingHandshakesPerAddress, "1"),
		actor.WithTransport(tr), actor.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, server) })
	dialFrom(t, server, hostB)
	testutil.Eventually(t, waitFor, "the socket in handshake", func() bool { return tr.Stats().Handshaking == 1 })
	for range 5 {
		expectRefused(t, dialFrom(t, server, hostB), netty.KeyMaxPendingHandshakesPerAddress)
	}
	if st := tr.Stats(); st.Refused != 5 {
		t.Fatalf("stats %+v: want 5 refused", st)
	}
	if n := strings.Count(logs.String(), netty.KeyMaxPendingHandshakesPerAddress+" (1) reached"); n != 1 {
		t.Fatalf("%d log lines about the refusals, want 1:\n%s", n, logs.String())
	}
}
