// Metrics: the env's Prometheus registry, its collector and the /metrics handler.

package actor

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsNamespace prefixes every metric name of sparkrpc.
const MetricsNamespace = "sparkrpc"

// WithMetricsRegistry makes the env register its collectors (and its
// transport's, when the transport is a prometheus.Collector) in reg instead
// of a registry of its own. The caller then owns reg's other collectors,
// such as the Go runtime and process ones. Two envs cannot share a registry
// (their metrics have the same names, and a second env on a registry in use
// fails to start): give each its own, served by its own handler
// (Env.MetricsHandler).
// The env leaves reg when it terminates, so that envs made one after
// another can use it in turn.
func WithMetricsRegistry(reg *prometheus.Registry) Option {
	return optionFunc(func(o *envOptions) { o.metrics = reg })
}

// Metrics returns the env's Prometheus registry: the one given with
// WithMetricsRegistry, or one made for the env, which also holds the Go
// runtime and process collectors. Components built on the env (a scheduler
// backend, a daemon) register their own collectors in it. Nothing of
// sparkrpc registers in prometheus.DefaultRegisterer.
//
// An env's own registry is made when first asked for (by Metrics or
// MetricsHandler): an env that nobody scrapes, such as an executor's, does
// not pay for the Go runtime and process collectors. Its counters run from
// the start either way.
func (e *Env) Metrics() *prometheus.Registry {
	e.metricsOnce.Do(e.makeRegistry)
	return e.metrics
}

// MetricsHandler returns the handler of the env's /metrics: every metric of
// its registry in Prometheus' text (or negotiated) format.
func (e *Env) MetricsHandler() http.Handler { return MetricsHandler(e.Metrics()) }

// MetricsHandler returns a /metrics handler for g, such as an env's
// registry (see Env.Metrics).
func MetricsHandler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// setupMetrics makes or takes the env's registry and registers the env's
// collector and its transport's in it.
func (e *Env) setupMetrics(reg *prometheus.Registry) error {
	if reg == nil {
		return nil // made when first asked for (see Metrics)
	}
	e.metricsOnce.Do(func() {}) // given: never make one
	e.metrics, e.metricsGiven = reg, true
	return e.registerCollectors(reg)
}

// makeRegistry makes the env's own registry: the Go runtime and process
// collectors, the env's and its transport's. The collectors are new to a
// new registry, so registering them cannot fail.
func (e *Env) makeRegistry() {
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(c); err != nil {
			e.log.Warn().Err(err).Msg("cannot register a runtime collector")
		}
	}
	if err := e.registerCollectors(reg); err != nil {
		e.log.Warn().Err(err).Msg("cannot register the env's collectors")
	}
	e.metrics = reg
}

// registerCollectors registers the env's collector and its transport's in
// reg.
func (e *Env) registerCollectors(reg *prometheus.Registry) error {
	if err := reg.Register(&envCollector{e}); err != nil {
		return err
	}
	if c, ok := e.transport.(prometheus.Collector); ok {
		if err := reg.Register(c); err != nil {
			reg.Unregister(&envCollector{e})
			return err
		}
	}
	return nil
}

// unregisterMetrics takes back what setupMetrics registered, for an env
// that failed to start.
func (e *Env) unregisterMetrics() {
	if e.metrics == nil {
		return
	}
	e.metrics.Unregister(&envCollector{e})
	if c, ok := e.transport.(prometheus.Collector); ok {
		e.metrics.Unregister(c)
	}
}

// NewMetricDesc describes the metric MetricsNamespace_name with help and
// variable labels: the descriptions of every sparkrpc collector (the env's,
// the transport's, the daemons') are made by it.
func NewMetricDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(MetricsNamespace+"_"+name, help, labels, nil)
}

var (
	descSent = NewMetricDesc("messages_sent_total",
		"Messages (one-way and asks) this env sent to endpoints of other envs, by target endpoint name and message type (messages to its own endpoints are counted as received).",
		"endpoint", "type")
	descReceived = NewMetricDesc("messages_received_total",
		"Messages (one-way and asks) delivered to the mailbox of an endpoint of this env, by endpoint and message type (sparkrpc_mailbox_messages of them not yet taken).",
		"endpoint", "type")
	descDropped = NewMetricDesc("messages_dropped_total",
		"Messages dropped: their endpoint had stopped or was not registered, or the transport could not deliver them.")
	descMailbox = NewMetricDesc("mailbox_messages",
		"Messages queued in an endpoint's mailbox and not yet taken by its loop.", "endpoint")
	descEndpoints  = NewMetricDesc("endpoints", "Endpoints registered in the env.")
	descAsksFlight = NewMetricDesc("asks_in_flight", "Asks made by this env that have not completed.")
	descAsks       = NewMetricDesc("asks_total",
		"Asks made by this env (local and remote), except those refused at once (an unknown local endpoint, an invalid timeout).")
	descAskDuration = NewMetricDesc("ask_duration_seconds",
		"Time from an ask to its completion (reply, failure or timeout): every remote ask, and one local ask in 16.")
	descAskFailures = NewMetricDesc("ask_failures_total", "Asks that failed, by cause.", "cause")
)

// envCollector reads the env's counters when the registry is scraped (see
// msgcount.go for how the message paths count).
type envCollector struct{ e *Env }

// Describe implements prometheus.Collector.
func (c *envCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSent, descReceived, descDropped, descMailbox, descEndpoints,
		descAsksFlight, descAsks, descAskDuration, descAskFailures} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *envCollector) Collect(ch chan<- prometheus.Metric) {
	e := c.e
	e.msgs.each(func(m *msgCounter) {
		if n := m.sent.Load(); n > 0 {
			ch <- prometheus.MustNewConstMetric(descSent, prometheus.CounterValue, float64(n), m.endpoint, m.typeName)
		}
	})
	e.received(func(endpoint, typeName string, n uint64) {
		ch <- prometheus.MustNewConstMetric(descReceived, prometheus.CounterValue, float64(n), endpoint, typeName)
	})
	ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(e.numDropped.Load()))
	n := 0
	e.endpoints.Range(func(k, v any) bool {
		n++
		ch <- prometheus.MustNewConstMetric(descMailbox, prometheus.GaugeValue,
			float64(v.(*cell).mb.UserMessageCount()), k.(string))
		return true
	})
	ch <- prometheus.MustNewConstMetric(descEndpoints, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(descAsksFlight, prometheus.GaugeValue, float64(e.futures.count()))
	ch <- prometheus.MustNewConstMetric(descAsks, prometheus.CounterValue, float64(e.futures.seq.Load()))
	count, sum, buckets := e.asks.histogram()
	ch <- prometheus.MustNewConstHistogram(descAskDuration, count, sum, buckets)
	for i, cause := range failureCauses {
		ch <- prometheus.MustNewConstMetric(descAskFailures, prometheus.CounterValue, float64(e.asks.failures[i].Load()), cause)
	}
}

// count returns the number of pending asks.
func (r *futureRegistry) count() int {
	n := 0
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}
