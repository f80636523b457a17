package endpoints_test

import (
	"context"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// With dynamic allocation on, the ExecutorAllocationManager owns the
// cluster manager's target. Driver.KillExecutors lowers that target behind
// its back (ClusterManager.KillExecutors: "the number of executors wanted
// drops by as many"), and the manager, whose own target did not change,
// never asks for it again: with minExecutors 2 the application is left with
// one executor for good. Spark refuses killExecutors while dynamic
// allocation is on ("killExecutors() unsupported with Dynamic Allocation
// turned on"); either that, or the manager asking again for its target,
// keeps minExecutors.
// Before, the application was left with one executor.
func TestKillExecutorsUnderDynamicAllocationKeepsMinExecutors(t *testing.T) {
	cm := newFakeClusterManager()
	c := startCluster(t, memNetwork(), testConf(), 2, 1, endpoints.WithClusterManager(cm))
	cfg, err := endpoints.ParseAllocationConfig(testConf(endpoints.KeyDynamicAllocationEnabled, "true",
		endpoints.KeyDynamicAllocationMinExecutors, "2", endpoints.KeyDynamicAllocationExecutorIdleTimeout, "1h"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := endpoints.NewExecutorAllocationManager(c.Driver, cfg, endpoints.WithAllocationInterval(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	defer m.Stop()
	if n := receiveWithin(t, cm.requests, "the initial request"); n != 2 {
		t.Fatalf("initial request for %d executors; want 2", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	id := c.Driver.Executors()[0].ID
	killed, err := c.Driver.KillExecutors(ctx, []string{id})
	if err != nil {
		return // refused, as Spark does
	}
	ids := receiveWithin(t, cm.kills, "the kill")
	t.Logf("killed %v (cluster manager asked to kill %v); %d executors left, manager's target %d",
		killed, ids, len(c.Driver.Executors()), m.Status().Target)
	// The cluster manager now wants 1 executor: the manager must ask for
	// its 2 again.
	select {
	case n := <-cm.requests:
		if n != 2 {
			t.Fatalf("asked for %d executors; want 2 (minExecutors)", n)
		}
	case <-time.After(testTimeout):
		t.Fatalf("KillExecutors lowered the cluster manager's target below minExecutors (2) and the allocation "+
			"manager never asked for its target again (its status says %d)", m.Status().Target)
	}
}
