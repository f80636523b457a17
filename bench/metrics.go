// Metrics: the Prometheus metrics of the envs a run starts, gathered as one.

package bench

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
)

// Metrics gathers the metrics of the sparkrpc envs a run starts (each with
// the label env="NAME-N", while it runs) and the process's Go runtime and
// process metrics, so that a run can be watched with Prometheus. Pass it to
// Run with WithMetrics and serve Handler. It is a prometheus.Gatherer.
type Metrics struct {
	runtime *prometheus.Registry
	mu      sync.Mutex
	envs    []trackedEnv
	seq     int
}

type trackedEnv struct {
	env   *actor.Env
	label string
}

// NewMetrics returns an empty Metrics with the runtime collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Metrics{runtime: reg}
}

// WithMetrics makes the run's sparkrpc envs report to m.
func WithMetrics(m *Metrics) Option {
	return func(h *harness) { h.metrics = m }
}

// Handler returns the /metrics handler of m.
func (m *Metrics) Handler() http.Handler { return actor.MetricsHandler(m) }

// envOptions returns the options of a new env: a registry of its own
// without runtime collectors (Metrics has them once).
func (m *Metrics) envOptions() []actor.Option {
	if m == nil {
		return nil
	}
	return []actor.Option{actor.WithMetricsRegistry(prometheus.NewRegistry())}
}

// track adds env to the gathered envs until it terminates.
func (m *Metrics) track(env *actor.Env) {
	if m == nil || env == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	m.envs = append(m.envs, trackedEnv{env: env, label: fmt.Sprintf("%s-%d", env.Name(), m.seq)})
}

// Gather implements prometheus.Gatherer: the runtime metrics and those of
// every env still running, labelled with the env.
func (m *Metrics) Gather() ([]*dto.MetricFamily, error) {
	m.mu.Lock()
	m.envs = slices.DeleteFunc(m.envs, func(t trackedEnv) bool {
		select {
		case <-t.env.Terminated():
			return true
		default:
			return false
		}
	})
	gs := prometheus.Gatherers{m.runtime}
	for _, t := range m.envs {
		gs = append(gs, labelled{t.env.Metrics(), t.label})
	}
	m.mu.Unlock()
	return gs.Gather()
}

// labelled gathers g and adds env=label to every metric.
type labelled struct {
	g     prometheus.Gatherer
	label string
}

func (l labelled) Gather() ([]*dto.MetricFamily, error) {
	fams, err := l.g.Gather()
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			mt.Label = append(mt.Label, &dto.LabelPair{Name: proto.String("env"), Value: proto.String(l.label)})
			slices.SortFunc(mt.Label, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
		}
	}
	return fams, err
}
