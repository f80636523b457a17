package endpoints_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// Every TaskStart of a job comes before its JobEnd, as in Spark (a
// listener, the event log, the history server, sees no task start in a job
// that ended). Here partition 0 is launched and partition 1, too large,
// aborts the job in the same scheduling step. Before, the step posted the
// JobEnd, then partition 0's TaskStart.
func TestNoTaskStartAfterItsJobEnd(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(actor.KeyMessageMaxSize, "1"), 2, 1)
	big := bytes.Repeat([]byte{'x'}, 1<<20)
	if _, err := runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{[]byte("small"), big}); !errors.Is(err, endpoints.ErrTaskTooLarge) {
		t.Fatalf("RunJob = %v; want ErrTaskTooLarge", err)
	}
	evs := c.rec.waitFor(t, "the killed attempt's TaskEnd", func(evs []endpoints.Event) bool {
		return countEvents(evs, func(e endpoints.TaskEnd) bool { return e.JobID == 0 }) == 1
	})
	ended := false
	for _, ev := range evs {
		switch e := ev.(type) {
		case endpoints.JobEnd:
			ended = ended || e.JobID == 0
		case endpoints.TaskStart:
			if e.JobID == 0 && ended {
				t.Fatalf("TaskStart of task %d after the JobEnd of its job; events:%s", e.TaskID, summarize(evs))
			}
		}
	}
}
