// This file holds the node manager's metrics: its containers and
// capability, in its env's registry.

package nodemanager

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sparkrpc/sparkrpc/actor"
)

var (
	descNMContainers = actor.NewMetricDesc("nm_containers_running", "Container processes the node manager runs.")
	descNMMemory     = actor.NewMetricDesc("nm_capability_memory_bytes", "Memory the node offers to containers.")
	descNMCores      = actor.NewMetricDesc("nm_capability_cores", "Cores the node offers to containers.")
	descNMLocalized  = actor.NewMetricDesc("nm_localized_resources_total",
		"Staged resources the node fetched from the resource manager and verified (once per application and digest).")
	descNMLocalizedBytes = actor.NewMetricDesc("nm_localized_bytes_total", "Bytes of the staged resources the node fetched and verified.")
)

const mib = 1 << 20

// nmCollector reads the node manager's containers at scrape time.
type nmCollector struct{ nm *NodeManager }

// Describe implements prometheus.Collector.
func (c nmCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descNMContainers
	ch <- descNMMemory
	ch <- descNMCores
	ch <- descNMLocalized
	ch <- descNMLocalizedBytes
}

// Collect implements prometheus.Collector.
func (c nmCollector) Collect(ch chan<- prometheus.Metric) {
	nm := c.nm
	nm.mu.Lock()
	n := len(nm.containers)
	nm.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(descNMContainers, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(descNMMemory, prometheus.GaugeValue, float64(nm.cfg.Capability.MemoryMB*mib))
	ch <- prometheus.MustNewConstMetric(descNMCores, prometheus.GaugeValue, float64(nm.cfg.Capability.Cores))
	ch <- prometheus.MustNewConstMetric(descNMLocalized, prometheus.CounterValue, float64(nm.loc.fetched.Load()))
	ch <- prometheus.MustNewConstMetric(descNMLocalizedBytes, prometheus.CounterValue, float64(nm.loc.fetchedBytes.Load()))
}

// MetricsHandler returns the handler of the node manager's /metrics: its
// env's registry, with the sparkrpc_nm_* metrics.
func (nm *NodeManager) MetricsHandler() http.Handler { return nm.env.MetricsHandler() }

// Metrics returns the registry the node manager's metrics are in (its
// env's).
func (nm *NodeManager) Metrics() *prometheus.Registry { return nm.env.Metrics() }
