package actor_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
)

const stringType = "google.protobuf.StringValue"

// The env's /metrics, scraped over HTTP after real traffic, reports what
// happened: sends and asks by endpoint and type, ask failures by cause,
// asks in flight, mailbox depth, drops, the ask latency of remote asks.
func TestMetricsAfterTraffic(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	echo := &testEndpoint{}
	register(t, server, "echo", echo)
	register(t, server, "silent", &testEndpoint{ask: func(*actor.CallContext, proto.Message) error { return nil }})
	register(t, server, "failing", &testEndpoint{ask: func(*actor.CallContext, proto.Message) error { return errors.New("boom") }})
	g := testutil.NewGate(t)
	entered := make(chan struct{}, 1)
	blockerRef := register(t, server, "blocker", &testEndpoint{receive: func(*actor.Context, proto.Message) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-g.Opened()
		return nil
	}})

	ref := setupRef(t, client, server, "echo")
	for range 5 {
		if err := ref.Send(str("hi")); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		askString(t, ref, "ask")
	}
	testutil.Eventually(t, testTimeout, fmt.Sprintf("echo received %d of 5 sends", echo.count("receive:")), func() bool { return echo.count("receive:") == 5 })

	short := actor.RpcTimeout{Duration: 20 * time.Millisecond, Key: actor.KeyAskTimeout}
	var te *actor.RpcTimeoutError
	if _, err := setupRef(t, client, server, "silent").AskSyncWithTimeout(testutil.Context(t, testTimeout), str("x"), short); !errors.As(err, &te) {
		t.Fatalf("ask to a silent endpoint = %v, want a timeout", err)
	}
	if _, err := setupRef(t, client, server, "failing").AskSync(testutil.Context(t, testTimeout), str("x")); err == nil {
		t.Fatal("ask to a failing endpoint succeeded")
	}
	missing := client.RemoteRef(server.Address(), "missing")
	if _, err := missing.AskSync(testutil.Context(t, testTimeout), str("x")); !errors.Is(err, actor.ErrEndpointNotFound) {
		t.Fatalf("ask to a missing endpoint = %v", err)
	}
	if err := missing.Send(str("lost")); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, testTimeout, fmt.Sprintf("server dropped %d messages, want 1", server.Dropped()), func() bool { return server.Dropped() == 1 })

	// A blocked handler: one message in it, three queued behind, and an
	// ask of the client's waiting on the silent endpoint.
	if err := blockerRef.Send(str("first")); err != nil {
		t.Fatal(err)
	}
	testutil.Recv(t, entered, testTimeout, "the blocker's handler")
	for range 3 {
		if err := blockerRef.Send(str("queued")); err != nil {
			t.Fatal(err)
		}
	}
	pendingCtx, cancelPending := context.WithCancel(testutil.Context(t, testTimeout))
	defer cancelPending()
	setupRef(t, client, server, "silent").AskWithTimeout(pendingCtx, str("wait"), actor.InfiniteTimeout())

	cm := testutil.Scrape(t, client.MetricsHandler())
	sm := testutil.Scrape(t, server.MetricsHandler())
	checks := []struct {
		m      testutil.Metrics
		name   string
		labels []string
		want   float64
	}{
		{cm, "sparkrpc_messages_sent_total", []string{"endpoint", "echo", "type", stringType}, 8},
		{sm, "sparkrpc_messages_received_total", []string{"endpoint", "echo", "type", stringType}, 8},
		{sm, "sparkrpc_messages_received_total", []string{"endpoint", "blocker", "type", stringType}, 4},
		{sm, "sparkrpc_mailbox_messages", []string{"endpoint", "blocker"}, 3},
		{sm, "sparkrpc_messages_dropped_total", nil, 1},
		{cm, "sparkrpc_messages_dropped_total", nil, 0},
		{cm, "sparkrpc_ask_failures_total", []string{"cause", actor.FailureTimeout}, 1},
		{cm, "sparkrpc_ask_failures_total", []string{"cause", actor.FailureRemoteError}, 1},
		{cm, "sparkrpc_ask_failures_total", []string{"cause", actor.FailureNotFound}, 1},
		{cm, "sparkrpc_ask_failures_total", []string{"cause", actor.FailureDisconnect}, 0},
		{cm, "sparkrpc_asks_in_flight", nil, 1},
		// Every remote ask is timed: the four lookups (CheckExistence to
		// the verifier) and the six asks above, the pending one excepted.
		{cm, "sparkrpc_ask_duration_seconds", nil, 4 + 6},
		{cm, "sparkrpc_asks_total", nil, 4 + 6 + 1},
	}
	for _, c := range checks {
		if got := c.m.Get(t, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// The runtime collectors are in an env's own registry.
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := sm[name]; !ok {
			t.Errorf("no %s in the scrape", name)
		}
	}
	g.Open()
}

// Two envs in one process have registries of their own: traffic on one
// does not show on the other, and neither uses the default registry.
func TestMetricsPerEnv(t *testing.T) {
	a := newEnv(t, nil)
	b := newEnv(t, nil)
	if a.Metrics() == b.Metrics() {
		t.Fatal("two envs share a registry")
	}
	ref := register(t, a, "echo", &testEndpoint{})
	for range 4 {
		askString(t, ref, "x")
	}
	register(t, b, "echo", &testEndpoint{})
	am := testutil.Scrape(t, a.MetricsHandler())
	bm := testutil.Scrape(t, b.MetricsHandler())
	if got := am.Get(t, "sparkrpc_messages_received_total", "endpoint", "echo"); got != 4 {
		t.Errorf("env a received %v, want 4", got)
	}
	if got, ok := bm.Value("sparkrpc_messages_received_total", "endpoint", "echo"); ok {
		t.Errorf("env b reports %v messages received, want none", got)
	}
	if got := bm.Get(t, "sparkrpc_asks_total"); got != 0 {
		t.Errorf("env b asks_total = %v, want 0", got)
	}
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if len(mf.GetName()) > 9 && mf.GetName()[:9] == "sparkrpc_" {
			t.Errorf("%s is in the default registry", mf.GetName())
		}
	}
}

// An endpoint registered again under a name adds to the messages the
// first one received: one series per name and type, whichever endpoint of
// that name took them.
func TestReceivedCountsSpanReRegistration(t *testing.T) {
	e := newEnv(t, nil)
	first := register(t, e, "echo", &testEndpoint{})
	for range 3 {
		askString(t, first, "x")
	}
	if err := e.Stop(first); err != nil {
		t.Fatal(err)
	}
	second := register(t, e, "echo", &testEndpoint{})
	for range 2 {
		askString(t, second, "y")
	}
	m := testutil.Scrape(t, e.MetricsHandler())
	if got := m.Get(t, "sparkrpc_messages_received_total", "endpoint", "echo"); got != 5 {
		t.Errorf("received by echo = %v, want 5 (3 by the first endpoint, 2 by the second)", got)
	}
}

// WithMetricsRegistry puts the env's metrics in the given registry, with
// nothing else; an env that cannot register there fails to start.
func TestWithMetricsRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, nil, actor.WithMetricsRegistry(reg))
	if e.Metrics() != reg {
		t.Fatal("Metrics() is not the given registry")
	}
	m := testutil.Scrape(t, e.MetricsHandler())
	if _, ok := m["sparkrpc_asks_total"]; !ok {
		t.Errorf("no sparkrpc_asks_total in the given registry: %v", m.Names())
	}
	if _, ok := m["go_goroutines"]; ok {
		t.Error("the env added the Go collector to a registry it was given")
	}
	_, err := actor.NewEnv("second", nil, actor.WithMetricsRegistry(reg))
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) {
		t.Errorf("second env on the same registry = %v, want AlreadyRegisteredError", err)
	}
}

// An endpoint registered and stopped again and again under one name keeps
// every count and leaves one counter per message type behind, not one per
// registration.
func TestReRegistrationDoesNotGrowCounters(t *testing.T) {
	e := newEnv(t, nil)
	const rounds = 50
	for i := range rounds {
		ref := register(t, e, "echo", &testEndpoint{})
		askString(t, ref, "x")
		if err := e.Stop(ref); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, testTimeout, "echo did not stop", func() bool { return !slices.Contains(actor.Running(e), "echo") })
		if i == 0 {
			continue
		}
		if n := actor.MsgCounters(e); n > 2 {
			t.Fatalf("after %d registrations: %d message counters, want at most 2", i+1, n)
		}
	}
	m := testutil.Scrape(t, e.MetricsHandler())
	if got := m.Get(t, "sparkrpc_messages_received_total", "endpoint", "echo"); got != rounds {
		t.Errorf("received by echo = %v, want %d", got, rounds)
	}
}
