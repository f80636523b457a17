package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// The resource manager's and the node manager's /metrics show an
// application's container while it runs, and the application's end.
func TestDaemonMetrics(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 4})
	h := mc.SubmitShell(`sleep 60`, cluster.Resource{MemoryMB: 256, Cores: 1})
	testutil.Eventually(t, 10*time.Second, "the container to start", func() bool { return len(mc.NMs[0].Containers()) == 1 })

	r, err := h.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rm := testutil.Scrape(t, mc.RM.MetricsHandler())
	node := mc.NMs[0].NodeID()
	checks := []struct {
		m      testutil.Metrics
		name   string
		labels []string
		want   float64
	}{
		{rm, "sparkrpc_rm_applications", []string{"state", r.State.String()}, 1},
		{rm, "sparkrpc_rm_applications", []string{"state", "KILLED"}, 0},
		{rm, "sparkrpc_rm_containers_running", nil, 1},
		{rm, "sparkrpc_rm_nodes", []string{"state", "RUNNING"}, 1},
		{rm, "sparkrpc_rm_node_containers", []string{"node", node}, 1},
		{rm, "sparkrpc_rm_node_memory_used_bytes", []string{"node", node}, 256 << 20},
		{rm, "sparkrpc_rm_node_memory_free_bytes", []string{"node", node}, 768 << 20},
		{rm, "sparkrpc_rm_node_cores_used", []string{"node", node}, 1},
		{rm, "sparkrpc_rm_node_cores_free", []string{"node", node}, 3},
	}
	for _, c := range checks {
		if got := c.m.Get(t, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	nm := testutil.Scrape(t, mc.NMs[0].MetricsHandler())
	if got := nm.Get(t, "sparkrpc_nm_containers_running"); got != 1 {
		t.Errorf("sparkrpc_nm_containers_running = %v, want 1", got)
	}
	if got := nm.Get(t, "sparkrpc_nm_capability_cores"); got != 4 {
		t.Errorf("sparkrpc_nm_capability_cores = %v, want 4", got)
	}
	if _, ok := nm["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics on the node manager's /metrics")
	}

	if _, err := mc.Client.Kill(context.Background(), h.AppID(), "done"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the killed app and its freed node in the metrics", func() bool {
		m := testutil.Scrape(t, mc.RM.MetricsHandler())
		killed, _ := m.Value("sparkrpc_rm_applications", "state", "KILLED")
		running, _ := m.Value("sparkrpc_rm_containers_running")
		return killed == 1 && running == 0
	})
	testutil.Eventually(t, 10*time.Second, "the node manager's container to stop", func() bool {
		v, _ := testutil.Scrape(t, mc.NMs[0].MetricsHandler()).Value("sparkrpc_nm_containers_running")
		return v == 0
	})
}
