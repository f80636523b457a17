package bench

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// A task that runs on its executor after a later partition of its job is
// counted as reordered; a new job, or another executor, starts afresh.
func TestLaunchOrderCountsATaskRunOutOfOrder(t *testing.T) {
	before := launchOrder.reordered.Load()
	for _, tc := range []endpoints.TaskContext{
		{ExecutorID: "x1", JobID: 900, Partition: 0},
		{ExecutorID: "x2", JobID: 900, Partition: 1},
		{ExecutorID: "x1", JobID: 900, Partition: 2},
		{ExecutorID: "x2", JobID: 900, Partition: 3},
		{ExecutorID: "x1", JobID: 901, Partition: 0}, // a new job
		{ExecutorID: "x2", JobID: 900, Partition: 2}, // after 3: out of order
	} {
		ranInOrder(tc)
	}
	if got := launchOrder.reordered.Load() - before; got != 1 {
		t.Fatalf("%d tasks counted out of order, want 1", got)
	}
}

// A new cluster starts afresh: its job 0 runs partition 0 on executor "1"
// after the cluster before it did the same. Go's benchmarks run a scenario
// more than once in a process, and BenchmarkEmptyTasks failed its check in
// about one run in five when this was counted.
func TestLaunchOrderStartsAfreshWithANewCluster(t *testing.T) {
	before := launchOrder.reordered.Load()
	ranInOrder(endpoints.TaskContext{ExecutorID: "1", JobID: 0, Partition: 0})
	startAfresh()
	ranInOrder(endpoints.TaskContext{ExecutorID: "1", JobID: 0, Partition: 0})
	if got := launchOrder.reordered.Load() - before; got != 0 {
		t.Fatalf("%d tasks of a new cluster counted out of order, want 0", got)
	}
}
