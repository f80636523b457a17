package bench

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// schedulingClass reads the policy of the thread it runs on: a thread moved
// to SCHED_BATCH (which needs no privilege) reports it.
func TestSchedulingClassReadsThePolicy(t *testing.T) {
	got := make(chan string, 1)
	go func() {
		// Never unlocked: the thread, and the policy set on it, end with
		// this goroutine.
		runtime.LockOSThread()
		if err := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_BATCH}, 0); err != nil {
			got <- "setting SCHED_BATCH: " + err.Error()
			return
		}
		got <- schedulingClass()
	}()
	if c := <-got; c != "SCHED_BATCH" {
		t.Fatalf("schedulingClass() = %q on a SCHED_BATCH thread", c)
	}
}
