// Metrics: the Transport as a prometheus.Collector, read when scraped.

package netty

import (
	"io"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sparkrpc/sparkrpc/actor"
)

var (
	descConnsOpen   = actor.NewMetricDesc("connections_open", "Established connections.")
	descHandshaking = actor.NewMetricDesc("connections_handshaking", "Accepted connections whose handshake has not finished.")
	descHSFailed    = actor.NewMetricDesc("handshakes_failed_total",
		"Connection handshakes that failed: reason auth (the shared secret was not proved) or protocol (bad or silent handshake, failed TLS handshake).",
		"reason")
	descRefused = actor.NewMetricDesc("connections_refused_total",
		"Connections refused because spark.rpc.netty.maxPendingHandshakes (or spark.rpc.netty.maxPendingHandshakesPerAddress from their address) were in handshake already.")
	descRefusedConns = actor.NewMetricDesc("connections_refused_established_total",
		"Connections refused because spark.rpc.netty.maxConnections (or spark.rpc.netty.maxConnectionsPerAddress from their address) were established already.")
	descIdentityInUse = actor.NewMetricDesc("connections_identity_in_use_total",
		"Inbound connections refused because they claimed the listening identity of a live connection.")
	descIdleClosed = actor.NewMetricDesc("connections_idle_closed_total",
		"Connections closed because they were idle (spark.rpc.io.idleTimeout, or silent since their handshake).")
	descTimedOut = actor.NewMetricDesc("connections_timed_out_total",
		"Connections closed because the peer went silent mid-frame or with asks outstanding.")
	descProtocolErrors = actor.NewMetricDesc("protocol_errors_total",
		"Connections closed because the peer sent bytes that are not the protocol.")
	descSentBytes = actor.NewMetricDesc("peer_sent_bytes_total",
		"Bytes written to the connections of a peer (by its identity: host:port, or the client id of a client-mode peer).", "peer")
	descRecvBytes = actor.NewMetricDesc("peer_received_bytes_total",
		"Bytes read from the established connections of a peer.", "peer")
	descQueued = actor.NewMetricDesc("peer_queued_bytes",
		"Outbound bytes queued for a peer and not yet written (bounded by spark.rpc.io.maxQueuedBytesPerConnection).", "peer")
)

// Describe implements prometheus.Collector: an env whose transport is a
// Transport registers it in its registry (see actor.Env.Metrics).
func (t *Transport) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descConnsOpen, descHandshaking, descHSFailed, descRefused, descRefusedConns, descIdentityInUse, descIdleClosed, descTimedOut,
		descProtocolErrors, descSentBytes, descRecvBytes, descQueued} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. The per-peer series cover the
// peers the transport knows now: a peer is forgotten once its connection
// closes, and its counters start again from zero when it comes back (a
// counter reset to Prometheus).
func (t *Transport) Collect(ch chan<- prometheus.Metric) {
	s := t.Stats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge(descConnsOpen, float64(s.Connections))
	gauge(descHandshaking, float64(s.Handshaking))
	counter(descHSFailed, float64(s.AuthFailures), "auth")
	counter(descHSFailed, float64(t.hsFailures.Load()), "protocol")
	counter(descRefused, float64(s.Refused))
	counter(descRefusedConns, float64(s.RefusedConnections))
	counter(descIdentityInUse, float64(s.IdentityInUse))
	counter(descIdleClosed, float64(s.IdleClosed))
	counter(descTimedOut, float64(s.TimedOut))
	counter(descProtocolErrors, float64(s.ProtocolErrors))
	t.peers.Range(func(_, v any) bool {
		p := v.(*peer)
		p.mu.Lock()
		queued := p.out.size + p.writing
		p.mu.Unlock()
		counter(descSentBytes, float64(p.sentBytes.Load()), p.identity)
		counter(descRecvBytes, float64(p.recvBytes.Load()), p.identity)
		gauge(descQueued, float64(queued), p.identity)
		return true
	})
}

var _ prometheus.Collector = (*Transport)(nil)

// countingReader counts the bytes read through it into n.
type countingReader struct {
	r io.Reader
	n *atomic.Uint64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(uint64(n))
	return n, err
}
