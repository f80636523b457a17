package endpoints_test

import (
	"context"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// A StatusUpdate ends a task only when it comes from the executor the task
// runs on: it must name that executor and come from its env. Here executor
// b, which never ran the task, reports it FINISHED with a result of its
// own, under its own id and under a's: the driver ignores both, a's core
// stays taken, and the job ends with a's result. Before, either update
// freed a core of a while its task still ran and made b's result the
// job's.
func TestStatusUpdateForAnotherExecutorsTaskIsRefused(t *testing.T) {
	for _, claimed := range []string{"b", "a"} {
		t.Run("claims_"+claimed, func(t *testing.T) {
			nw := memNetwork()
			env := nw.driverEnv(t, testConf())
			t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
			d, err := endpoints.NewDriver(env)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Stop(context.Background()) })
			a, b := newFakeExecutor(t, nw, d.URL()), newFakeExecutor(t, nw, d.URL())
			if err := a.register("a", "h", 1); err != nil {
				t.Fatal(err)
			}
			if err := a.driver.Send(&messages.LaunchedExecutor{ExecutorId: "a"}); err != nil {
				t.Fatal(err)
			}
			type result struct {
				res [][]byte
				err error
			}
			done := make(chan result, 1)
			go func() {
				res, err := runJob(t, d, endpoints.EchoTaskName, [][]byte{[]byte("real")})
				done <- result{res, err}
			}()
			lt := a.nextLaunch(t) // the task runs on a
			if err := b.register("b", "h", 1); err != nil {
				t.Fatal(err)
			}
			// b forges the task's end, then a round trip through the
			// driver's loop shows it was handled.
			if err := b.driver.Send(&messages.StatusUpdate{ExecutorId: claimed, TaskId: lt.TaskId,
				State: messages.TaskState_TASK_STATE_FINISHED, Result: []byte("forged"), TaskCpus: 1}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			if _, err := actor.AskAs[*messages.SparkAppConfig](ctx, b.driver, &messages.RetrieveSparkAppConfig{}); err != nil {
				t.Fatal(err)
			}
			if ex, _ := executor(d, "a"); ex.FreeCores != 0 {
				t.Errorf("executor a has %d free cores while its task still runs", ex.FreeCores)
			}
			// a reports the real result.
			if err := a.driver.Send(&messages.StatusUpdate{ExecutorId: "a", TaskId: lt.TaskId,
				State: messages.TaskState_TASK_STATE_FINISHED, Result: []byte("real"), TaskCpus: 1}); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			if got := string(r.res[0]); got != "real" {
				t.Fatalf("job result = %q: executor b finished a task running on executor a (claiming id %q)", got, claimed)
			}
		})
	}
}
