package endpoints_test

import (
	"context"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// The driver env's /metrics counts a job's executors, tasks and offers: a
// job of ten tasks, one task that fails twice before it succeeds, and an
// executor killed.
func TestSchedulerMetricsAfterJobs(t *testing.T) {
	c := startCluster(t, tcpNetwork(), testConf(), 2, 2)
	if _, err := runJob(t, c.Driver, endpoints.EchoTaskName, make([][]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if _, err := runJob(t, c.Driver, "test.flaky", [][]byte{[]byte("x")}); err != nil {
		t.Fatal(err)
	}
	ids := c.Driver.Executors()
	if err := c.Driver.KillExecutor(ids[0].ID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.Driver.WaitForExecutorsGone(ctx, ids[0].ID); err != nil {
		t.Fatal(err)
	}
	m := testutil.Scrape(t, c.Driver.MetricsHandler())
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"sparkrpc_scheduler_executors_registered_total", nil, 2},
		{"sparkrpc_scheduler_executors_lost_total", []string{"reason", endpoints.LossKilled}, 1},
		{"sparkrpc_scheduler_executors_lost_total", []string{"reason", endpoints.LossDisassociated}, 0},
		{"sparkrpc_scheduler_executors_active", nil, 1},
		{"sparkrpc_scheduler_tasks_launched_total", nil, 13},
		{"sparkrpc_scheduler_tasks_finished_total", nil, 11},
		{"sparkrpc_scheduler_tasks_failed_total", nil, 2},
		{"sparkrpc_scheduler_tasks_killed_total", nil, 0},
		{"sparkrpc_scheduler_task_duration_seconds", nil, 13},
	}
	for _, c := range checks {
		if got := m.Get(t, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := m.Get(t, "sparkrpc_scheduler_offers_total"); got < 1 {
		t.Errorf("sparkrpc_scheduler_offers_total = %v, want some", got)
	}
	// The driver's endpoint got the executors' messages, counted by type:
	// 13 launches, a RUNNING and a final update each. The loop publishes a
	// turn's count when the turn ends.
	testutil.Eventually(t, testTimeout, "26 StatusUpdates counted", func() bool {
		got, _ := testutil.Scrape(t, c.Driver.MetricsHandler()).Value("sparkrpc_messages_received_total",
			"endpoint", endpoints.DriverEndpointName, "type", "sparkrpc.messages.StatusUpdate")
		return got == 26
	})
}
