package netty_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A networked env's /metrics reports its connections, the bytes to and
// from each peer, failed handshakes, and asks failed by a disconnect.
func TestTransportMetrics(t *testing.T) {
	server := newEnv(t, "server", nil)
	client := newEnv(t, "client", nil)
	register(t, server, "echo", newEcho())
	quiet := silent{asked: make(chan struct{}, 1)}
	register(t, server, "silent", quiet)
	ref := lookup(t, client, server.Address(), "echo")
	payload := strings.Repeat("x", 1024)
	for range 10 {
		askString(t, ref, payload)
	}
	// Garbage on the port: a failed handshake.
	nc, err := net.Dial("tcp", server.Address().HostPort())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, waitFor, "a failed handshake in the metrics", func() bool {
		v, _ := testutil.Scrape(t, server.MetricsHandler()).Value("sparkrpc_handshakes_failed_total", "reason", "protocol")
		return v == 1
	})
	nc.Close()

	sm := testutil.Scrape(t, server.MetricsHandler())
	cm := testutil.Scrape(t, client.MetricsHandler())
	clientID, serverID := client.Address().HostPort(), server.Address().HostPort()
	for _, c := range []struct {
		m      testutil.Metrics
		name   string
		labels []string
		min    float64
	}{
		{cm, "sparkrpc_peer_sent_bytes_total", []string{"peer", serverID}, 10 * 1024},
		{cm, "sparkrpc_peer_received_bytes_total", []string{"peer", serverID}, 10 * 1024},
		{sm, "sparkrpc_peer_sent_bytes_total", []string{"peer", clientID}, 10 * 1024},
		{sm, "sparkrpc_peer_received_bytes_total", []string{"peer", clientID}, 10 * 1024},
	} {
		if got := c.m.Get(t, c.name, c.labels...); got < c.min {
			t.Errorf("%s%v = %v, want at least %v", c.name, c.labels, got, c.min)
		}
	}
	if got := cm.Get(t, "sparkrpc_connections_open"); got != 1 {
		t.Errorf("client connections_open = %v, want 1", got)
	}
	if got := cm.Get(t, "sparkrpc_peer_queued_bytes", "peer", serverID); got != 0 {
		t.Errorf("client peer_queued_bytes = %v, want 0 once every ask is answered", got)
	}
	if got := sm.Get(t, "sparkrpc_handshakes_failed_total", "reason", "auth"); got != 0 {
		t.Errorf("handshakes_failed_total{reason=auth} = %v, want 0", got)
	}

	// An ask pending when the server goes away fails as a disconnect. The
	// server must hold it first: one still in its mailbox when it stops is
	// answered "RpcEnv has been stopped" instead, which is no disconnect.
	pending := lookup(t, client, server.Address(), "silent").AskWithTimeout(testutil.Context(t, waitFor), str("wait"), actor.InfiniteTimeout())
	waitAsked(t, quiet)
	shutdown(t, server)
	if _, err := pending.Wait(testutil.Context(t, waitFor)); !errors.Is(err, actor.ErrConnectionClosed) {
		t.Fatalf("pending ask = %v, want ErrConnectionClosed", err)
	}
	cm = testutil.Scrape(t, client.MetricsHandler())
	if got := cm.Get(t, "sparkrpc_ask_failures_total", "cause", actor.FailureDisconnect); got != 1 {
		t.Errorf("ask_failures_total{cause=disconnect} = %v, want 1", got)
	}
}
