// This file holds the resource manager's metrics: its applications,
// containers and node resources, in its env's registry.

package resourcemanager

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

const mib = 1 << 20

// metricsScrapeTimeout bounds how long a scrape waits for the resource
// manager's endpoint to answer (it is serial: a scrape queues behind its
// mail rather than read its state from another goroutine).
const metricsScrapeTimeout = 5 * time.Second

var (
	descRMApps       = actor.NewMetricDesc("rm_applications", "Applications the resource manager knows, by state.", "state")
	descRMContainers = actor.NewMetricDesc("rm_containers_running",
		"Containers allocated on the cluster's nodes (application masters and executors).")
	descRMNodes       = actor.NewMetricDesc("rm_nodes", "Nodes registered with the resource manager, by state (RUNNING, LOST, SHUTDOWN).", "state")
	descRMNodeConts   = actor.NewMetricDesc("rm_node_containers", "Containers allocated on a node.", "node")
	descRMNodeMemUsed = actor.NewMetricDesc("rm_node_memory_used_bytes", "Memory of a node allocated to containers.", "node")
	descRMNodeMemFree = actor.NewMetricDesc("rm_node_memory_free_bytes", "Memory of a node not allocated to containers.", "node")
	descRMNodeCPUUsed = actor.NewMetricDesc("rm_node_cores_used", "Cores of a node allocated to containers.", "node")
	descRMNodeCPUFree = actor.NewMetricDesc("rm_node_cores_free", "Cores of a node not allocated to containers.", "node")
)

// rmCollector reads the resource manager's state at scrape time by asking
// its endpoint, with the messages `sparkrpc apps` uses.
type rmCollector struct{ rm *ResourceManager }

// Describe implements prometheus.Collector.
func (c rmCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRMApps, descRMContainers, descRMNodes, descRMNodeConts,
		descRMNodeMemUsed, descRMNodeMemFree, descRMNodeCPUUsed, descRMNodeCPUFree} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c rmCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), metricsScrapeTimeout)
	defer cancel()
	apps, err := actor.AskAs[*messages.RmApplications](ctx, c.rm.ref, &messages.RmGetApplications{})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descRMApps, err)
	} else {
		byState := make(map[cluster.AppState]int)
		for _, a := range apps.GetApps() {
			byState[cluster.AppState(a.GetState())]++
		}
		for _, s := range cluster.AppStates() { // each reported, at 0 when no application is in it
			ch <- prometheus.MustNewConstMetric(descRMApps, prometheus.GaugeValue, float64(byState[s]), s.String())
		}
	}
	nodes, err := actor.AskAs[*messages.RmClusterNodes](ctx, c.rm.ref, &messages.RmGetClusterNodes{})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descRMNodes, err)
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	containers := 0
	byState := map[string]int{"RUNNING": 0, "LOST": 0, "SHUTDOWN": 0}
	for _, n := range nodes.GetNodes() {
		byState[n.GetState()]++
		id := n.GetNodeId()
		containers += int(n.GetNumContainers())
		capa, used := n.GetCapability(), n.GetUsed()
		gauge(descRMNodeConts, float64(n.GetNumContainers()), id)
		gauge(descRMNodeMemUsed, float64(used.GetMemoryMb()*mib), id)
		gauge(descRMNodeMemFree, float64(max(0, capa.GetMemoryMb()-used.GetMemoryMb())*mib), id)
		gauge(descRMNodeCPUUsed, float64(used.GetCores()), id)
		gauge(descRMNodeCPUFree, float64(max(0, capa.GetCores()-used.GetCores())), id)
	}
	gauge(descRMContainers, float64(containers))
	for s, n := range byState {
		gauge(descRMNodes, float64(n), s)
	}
}

// MetricsHandler returns the handler of the resource manager's /metrics:
// its env's registry (see actor.Env.Metrics), which holds the RM's
// sparkrpc_rm_* metrics beside the env's and the Go runtime's.
func (rm *ResourceManager) MetricsHandler() http.Handler { return rm.env.MetricsHandler() }

// Metrics returns the registry the resource manager's metrics are in (its
// env's), for a server that gathers it with more.
func (rm *ResourceManager) Metrics() *prometheus.Registry { return rm.env.Metrics() }
