package endpoints_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// A job cancelled with a cause whose text is not valid UTF-8 (it names a
// file or quotes input) still has its running tasks killed, over TCP too,
// and its cores go to the next job.
// Before, the KillTask carrying the cause could not be sent over TCP: the
// task ran on and held its core.
func TestCancelCauseNotUTF8KillsTasks(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 1, 1)
		key, _ := gates.New(t)
		ctx, cancel := context.WithCancelCause(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := c.Driver.RunJob(ctx, "test.gated", gatedPayloads(key, 1))
			errc <- err
		}()
		c.rec.waitFor(t, "the task running", func(evs []endpoints.Event) bool { return countEvents[endpoints.TaskStart](evs, nil) == 1 })
		why := errors.New("client \xff\xfe went away")
		cancel(why)
		if err := <-errc; !errors.Is(err, why) {
			t.Fatalf("RunJob = %v; want the cancel's cause", err)
		}
		c.rec.waitFor(t, "the task killed", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.TaskEnd) bool { return e.State == messages.TaskState_TASK_STATE_KILLED }) == 1
		})
		if res, err := runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{[]byte("next")}); err != nil || string(res[0]) != "next" {
			t.Fatalf("next job = %q, %v", res, err)
		}
	})
}
