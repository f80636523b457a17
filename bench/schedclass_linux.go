package bench

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// schedulingClass returns the scheduling policy of the calling thread (a
// process's threads share the one it was started in, such as `chrt -f 10`'s)
// when it is not the default time-sharing one, and "" when it is or cannot
// be read.
func schedulingClass() string {
	attr, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return ""
	}
	switch attr.Policy {
	case unix.SCHED_FIFO:
		return fmt.Sprintf("SCHED_FIFO priority %d", attr.Priority)
	case unix.SCHED_RR:
		return fmt.Sprintf("SCHED_RR priority %d", attr.Priority)
	case unix.SCHED_BATCH:
		return "SCHED_BATCH"
	case unix.SCHED_IDLE:
		return "SCHED_IDLE"
	case unix.SCHED_DEADLINE:
		return "SCHED_DEADLINE"
	default:
		return ""
	}
}
