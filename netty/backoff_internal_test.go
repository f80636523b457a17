package netty

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func TestBackoffWindow(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name             string
		initial, maxWait time.Duration
		failures         int
		jitter           float64
		want             time.Duration
	}{
		{"no failure", 100 * ms, 10 * time.Second, 0, 0.5, 0},
		{"off", 0, 10 * time.Second, 3, 0.5, 0},
		{"first", 100 * ms, 10 * time.Second, 1, 0.5, 100 * ms},
		{"doubles", 100 * ms, 10 * time.Second, 3, 0.5, 400 * ms},
		{"least jitter halves", 100 * ms, 10 * time.Second, 2, 0, 100 * ms},
		{"most jitter adds half", 100 * ms, 10 * time.Second, 2, 1, 300 * ms},
		{"capped", 100 * ms, 10 * time.Second, 9, 0.5, 10 * time.Second},
		{"capped after jitter", 100 * ms, 10 * time.Second, 9, 0.99, 10 * time.Second},
		{"no overflow", time.Second, time.Hour, 1000, 0.5, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := backoffWindow(tc.initial, tc.maxWait, tc.failures, tc.jitter); got != tc.want {
				t.Fatalf("backoffWindow = %s, want %s", got, tc.want)
			}
		})
	}
}

// deadAddress returns an address on which nothing listens.
func deadAddress(t *testing.T) actor.RpcAddress {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return actor.NewRpcAddress("127.0.0.1", port)
}

func testEnv(t *testing.T, name string, conf *actor.Conf, tr *Transport) *actor.Env {
	t.Helper()
	env, err := actor.NewEnv(name, conf, actor.WithTransport(tr), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdownEnv(t, env) })
	return env
}

func shutdownEnv(t *testing.T, env *actor.Env) {
	ctx, cancel := context.WithTimeout(context.Background(), reconnectWait)
	defer cancel()
	if err := env.Shutdown(ctx); err != nil && !errors.Is(err, actor.ErrEnvStopped) {
		t.Errorf("shutdown %s: %v", env.Name(), err)
	}
}

func (t *Transport) numPeers() int {
	n := 0
	t.peers.Range(func(any, any) bool { n++; return true })
	return n
}

func (t *Transport) peerState(id string) (failures int, connErr *ConnectError, ok bool) {
	v, ok := t.peers.Load(id)
	if !ok {
		return 0, nil, false
	}
	p := v.(*peer)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failures, p.connErr, true
}

// After a failed connect, a flood of sends to the peer within the backoff
// window fails at once with the connect's error: none of them dials.
func TestSendsWithinBackoffFailFast(t *testing.T) {
	conf := actor.NewConf().Set(KeyConnectBackoff, "1h").Set(KeyConnectBackoffMax, "1h")
	tr := NewTransport(WithClientMode())
	client := testEnv(t, "client", conf, tr)
	ref := client.RemoteRef(deadAddress(t), "nobody")
	_, err := ref.AskSync(context.Background(), wrapperspb.String("first"))
	var first *ConnectError
	if !errors.As(err, &first) || !strings.Contains(err.Error(), "failed to connect") {
		t.Fatalf("first ask: err = %v, want a *ConnectError", err)
	}
	for i := range 1000 {
		err := ref.Send(wrapperspb.String("flood"))
		var ce *ConnectError
		if !errors.As(err, &ce) || ce != first {
			t.Fatalf("send %d within the backoff window: err = %v, want the first connect's error", i, err)
		}
	}
	if failures, _, _ := tr.peerState(ref.Address().HostPort()); failures != 1 {
		t.Fatalf("failed connects = %d, want 1", failures)
	}
	if _, err := ref.AskSync(context.Background(), wrapperspb.String("ask")); !errors.As(err, &first) {
		t.Fatalf("ask within the window: err = %v", err)
	}
}

// The window grows with every failed connect and is forgotten once a
// connect succeeds.
func TestBackoffGrowsAndResets(t *testing.T) {
	conf := actor.NewConf().Set(KeyConnectBackoff, "5ms").Set(KeyConnectBackoffMax, "1h")
	tr := NewTransport(WithClientMode())
	client := testEnv(t, "client", conf, tr)
	addr := deadAddress(t)
	id := addr.HostPort()
	ref := client.RemoteRef(addr, "echo")
	var last *ConnectError
	for want := 1; want <= 3; want++ {
		testutil.Eventually(t, reconnectWait, "a failed connect", func() bool {
			_, err := ref.AskSync(context.Background(), wrapperspb.String("hi"))
			var ce *ConnectError
			if !errors.As(err, &ce) {
				t.Fatalf("ask: err = %v, want a *ConnectError", err)
			}
			failures, _, _ := tr.peerState(id)
			return failures == want
		})
		_, ce, _ := tr.peerState(id)
		lo := 5 * time.Millisecond << (want - 1) / 2
		if ce.Backoff < lo || ce.Backoff > 3*lo {
			t.Fatalf("window after %d failures = %s, want within [%s, %s]", want, ce.Backoff, lo, 3*lo)
		}
		last = ce
	}
	// The peer comes up on that port: once the window has passed, a send
	// connects and the failures are forgotten.
	server := NewTransport(WithPort(addr.Port))
	srv := testEnv(t, "server", actor.NewConf().Set(KeyPortMaxRetries, "0"), server)
	got := make(chan proto.Message, 1)
	if _, err := srv.RegisterEndpoint("echo", actor.ReceiveFunc(func(_ *actor.Context, m proto.Message) error {
		select {
		case got <- m:
		default:
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, reconnectWait, "a connection once the window has passed", func() bool {
		err := ref.Send(wrapperspb.String("up"))
		var ce *ConnectError
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("send: %v", err)
		}
		return err == nil && tr.Stats().Connections == 1
	})
	select {
	case <-got:
	case <-time.After(reconnectWait):
		t.Fatal("nothing arrived")
	}
	if failures, ce, ok := tr.peerState(id); !ok || failures != 0 || ce != nil {
		t.Fatalf("after a connect: failures = %d, err = %v (in map %v); last failure was %v", failures, ce, ok, last)
	}
}

// Peers that connect and go away leave nothing behind in the transport's
// per-peer tables, client-mode and listening peers alike.
func TestPeerTablesPrunedWhenPeersGoAway(t *testing.T) {
	const n = 20
	noop := actor.ReceiveFunc(func(*actor.Context, proto.Message) error { return nil })
	tr := NewTransport()
	server := testEnv(t, "server", nil, tr)
	if _, err := server.RegisterEndpoint("sink", noop); err != nil {
		t.Fatal(err)
	}
	basePeers := tr.numPeers()
	baseRaw := func() int { tr.mu.Lock(); defer tr.mu.Unlock(); return len(tr.raw) }()

	var others []*actor.Env
	for i := range n {
		opts := []Option{}
		if i%2 == 0 {
			opts = append(opts, WithClientMode()) // it connects to the server
		}
		env := testEnv(t, "peer", nil, NewTransport(opts...))
		if _, err := env.RegisterEndpoint("sink", noop); err != nil {
			t.Fatal(err)
		}
		var err error
		if i%2 == 0 {
			err = env.RemoteRef(server.Address(), "sink").Send(wrapperspb.String("hi"))
		} else {
			err = server.RemoteRef(env.Address(), "sink").Send(wrapperspb.String("hi")) // the server dials it
		}
		if err != nil {
			t.Fatal(err)
		}
		others = append(others, env)
	}
	testutil.Eventually(t, reconnectWait, "every peer connected", func() bool { return tr.Stats().Connections == n })
	if got := tr.numPeers(); got != basePeers+n {
		t.Fatalf("peers = %d, want %d", got, basePeers+n)
	}
	for _, env := range others {
		shutdownEnv(t, env)
	}
	testutil.Eventually(t, reconnectWait, "the per-peer tables back to their size", func() bool {
		tr.mu.Lock()
		raw := len(tr.raw)
		tr.mu.Unlock()
		return tr.Stats().Connections == 0 && tr.numPeers() == basePeers && raw == baseRaw
	})
}

// A peer whose connect failed and that nobody sends to any more leaves the
// map once its backoff window has passed by the cap.
func TestFailedPeerForgottenWhenIdle(t *testing.T) {
	conf := actor.NewConf().Set(KeyConnectBackoff, "1ms").Set(KeyConnectBackoffMax, "2ms")
	tr := NewTransport(WithClientMode())
	client := testEnv(t, "client", conf, tr)
	addr := deadAddress(t)
	if _, err := client.RemoteRef(addr, "nobody").AskSync(context.Background(), wrapperspb.String("hi")); err == nil {
		t.Fatal("ask to a dead address succeeded")
	}
	testutil.Eventually(t, reconnectWait, "the failed peer forgotten", func() bool { _, _, ok := tr.peerState(addr.HostPort()); return !ok })
}

// The backoff window's jitter comes from WithRand's source: two transports
// given equally seeded sources choose the same window after the same
// failed connect, and a differently seeded one another.
func TestWithRandChoosesTheBackoffJitter(t *testing.T) {
	conf := actor.NewConf().Set(KeyConnectBackoff, "1h").Set(KeyConnectBackoffMax, "1h")
	addr := deadAddress(t)
	window := func(name string, seed uint64) time.Duration {
		tr := NewTransport(WithClientMode(), WithRand(rand.New(rand.NewPCG(seed, 1))))
		env := testEnv(t, name, conf, tr)
		_, err := env.RemoteRef(addr, "nobody").AskSync(context.Background(), wrapperspb.String("x"))
		var ce *ConnectError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: err = %v, want a *ConnectError", name, err)
		}
		return ce.Backoff
	}
	a, b, c := window("a", 7), window("b", 7), window("c", 8)
	if a != b {
		t.Errorf("equally seeded sources chose windows %v and %v", a, b)
	}
	if a == c {
		t.Errorf("differently seeded sources both chose %v", a)
	}
}
