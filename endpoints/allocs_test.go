package endpoints_test

import (
	"context"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// An empty task costs 9 allocations in all (driver, executors and both
// ends of their connections) with no listener: the LaunchTask, its decoded
// copy and task name on the executor, the RUNNING and final StatusUpdates
// and their decoded copies on the driver, and the task's cancellable
// context (2). Offers, attempts and the executor's queue are reused, and
// the codec's sends of alternating types allocate nothing (9.57 when they
// did). The race detector allocates differently, so the bound is checked
// without it.
func TestEmptyTaskAllocations(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("the race detector allocates differently")
	}
	lc := startBareCluster(t, tcpNetwork(), testConf(), 4, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const tasks = 1000
	payloads := make([][]byte, tasks)
	run := func() {
		if _, err := lc.Driver.RunJob(ctx, endpoints.NoopTaskName, payloads); err != nil {
			t.Fatal(err)
		}
	}
	run() // warm up: connections, pools, free lists
	perTask := testing.AllocsPerRun(5, run) / tasks
	t.Logf("%.2f allocations per empty task", perTask)
	if perTask > 9.5 {
		t.Fatalf("%.2f allocations per empty task, want at most 9.5", perTask)
	}
}
