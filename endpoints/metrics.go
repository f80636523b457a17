// Scheduler metrics: executors, tasks and offers of a Driver, in its env's registry.

package endpoints

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Executor loss reasons, the values of the reason label of
// sparkrpc_scheduler_executors_lost_total: Spark's loss reasons are free
// text, so they are put in these few classes.
const (
	LossDisassociated    = "disassociated"     // ReasonDisassociated: its connection closed
	LossKilled           = "killed"            // ReasonKilled: KillExecutor, KillExecutors
	LossHeartbeatTimeout = "heartbeat_timeout" // no heartbeat for spark.network.timeout
	LossLaunchFailed     = "launch_failed"     // a task could not be sent to it
	LossOther            = "other"             // any other reason (the cluster manager's, the executor's own)
)

// lossClass returns the class of a loss reason.
func lossClass(reason string) string {
	switch {
	case reason == ReasonDisassociated:
		return LossDisassociated
	case reason == ReasonKilled:
		return LossKilled
	case strings.HasPrefix(reason, "Executor heartbeat timed out"):
		return LossHeartbeatTimeout
	case strings.HasPrefix(reason, "Could not launch a task"):
		return LossLaunchFailed
	}
	return LossOther
}

// schedulerMetrics are the driver's metrics. They change with executors
// and tasks, never per RPC message, so they are client_golang metrics
// updated in place (under the driver's lock, where the state changes).
type schedulerMetrics struct {
	registered prometheus.Counter
	lost       *prometheus.CounterVec
	active     prometheus.GaugeFunc
	launched   prometheus.Counter
	finished   prometheus.Counter
	failed     prometheus.Counter
	killed     prometheus.Counter
	duration   prometheus.Histogram
	offers     prometheus.Counter
}

func newSchedulerMetrics(d *Driver) *schedulerMetrics {
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: actor.MetricsNamespace, Subsystem: "scheduler", Name: name, Help: help}
	}
	m := &schedulerMetrics{
		registered: prometheus.NewCounter(prometheus.CounterOpts(opts("executors_registered_total",
			"Executors that registered with the driver."))),
		lost: prometheus.NewCounterVec(prometheus.CounterOpts(opts("executors_lost_total",
			"Executors the driver removed, by class of loss reason; not those it told to shut down.")), []string{"reason"}),
		active: prometheus.NewGaugeFunc(prometheus.GaugeOpts(opts("executors_active",
			"Executors registered, launched and not being removed or decommissioned.")), d.activeExecutors),
		launched: prometheus.NewCounter(prometheus.CounterOpts(opts("tasks_launched_total",
			"Task attempts sent to executors."))),
		finished: prometheus.NewCounter(prometheus.CounterOpts(opts("tasks_finished_total",
			"Task attempts that ended FINISHED."))),
		failed: prometheus.NewCounter(prometheus.CounterOpts(opts("tasks_failed_total",
			"Task attempts that ended FAILED."))),
		killed: prometheus.NewCounter(prometheus.CounterOpts(opts("tasks_killed_total",
			"Task attempts that ended KILLED or LOST (run again elsewhere; a LOST one may count towards spark.task.maxFailures)."))),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: actor.MetricsNamespace, Subsystem: "scheduler",
			Name: "task_duration_seconds", Help: "Time from a task attempt's launch to the driver learning of its end.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 12)}),
		offers: prometheus.NewCounter(prometheus.CounterOpts(opts("offers_total",
			"Resource offers made: an executor's free cores offered to the pending tasks."))),
	}
	for _, r := range []string{LossDisassociated, LossKilled, LossHeartbeatTimeout, LossLaunchFailed, LossOther} {
		m.lost.WithLabelValues(r) // every class shows, at 0
	}
	return m
}

func (m *schedulerMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.registered, m.lost, m.active, m.launched, m.finished, m.failed, m.killed,
		m.duration, m.offers}
}

// Describe implements prometheus.Collector.
func (m *schedulerMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (m *schedulerMetrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
}

// taskEnded counts the end of a task attempt.
func (m *schedulerMetrics) taskEnded(e TaskEnd) {
	switch e.State {
	case messages.TaskState_TASK_STATE_FINISHED:
		m.finished.Inc()
	case messages.TaskState_TASK_STATE_FAILED:
		m.failed.Inc()
	default:
		m.killed.Inc()
	}
	m.duration.Observe(e.Duration.Seconds())
}

// record counts what a scheduling step did.
func (m *schedulerMetrics) record(out *offerResult) {
	m.launched.Add(float64(len(out.started)))
	for _, e := range out.endedAt {
		m.taskEnded(e)
	}
}

// activeExecutors returns the number of active executors.
func (d *Driver) activeExecutors() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, ex := range d.executors {
		if ex.active() {
			n++
		}
	}
	return float64(n)
}

// MetricsHandler returns the handler of the driver's /metrics: its env's
// registry (see actor.Env.Metrics), with the sparkrpc_scheduler_* metrics
// beside the env's own and the Go runtime's.
func (d *Driver) MetricsHandler() http.Handler { return d.env.MetricsHandler() }
