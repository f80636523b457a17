package endpoints_test

import (
	"context"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// A task that ends FAILED or LOST on an executor that gets no new tasks
// (decommissioning) runs again on another executor at once, as Spark's
// handleFailedTask revives every offer. Here executor a, decommissioning,
// reports its task FAILED (a task error) or LOST (a LaunchTask that reached
// it while it drained): executor b, idle, must get the task without
// waiting for the periodic revive (set to 1h so that it never comes).
// Before, only a was offered the task again, and a takes no task.
func TestFailedTaskOnAnInactiveExecutorRunsElsewhere(t *testing.T) {
	for _, state := range []messages.TaskState{messages.TaskState_TASK_STATE_FAILED, messages.TaskState_TASK_STATE_LOST} {
		t.Run(state.String(), func(t *testing.T) {
			nw := memNetwork()
			env := nw.driverEnv(t, testConf(endpoints.KeyReviveInterval, "1h"))
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
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := d.RunJob(ctx, endpoints.EchoTaskName, [][]byte{[]byte("x")})
				done <- err
			}()
			lt := a.nextLaunch(t) // the only ready executor takes it
			if err := b.register("b", "h", 1); err != nil {
				t.Fatal(err)
			}
			if err := b.driver.Send(&messages.LaunchedExecutor{ExecutorId: "b"}); err != nil {
				t.Fatal(err)
			}
			if !d.DecommissionExecutor("a", "host going away") {
				t.Fatal("executor a unknown")
			}
			if err := a.driver.Send(&messages.StatusUpdate{ExecutorId: "a", TaskId: lt.TaskId, State: state,
				Error: "boom", TaskCpus: 1}); err != nil {
				t.Fatal(err)
			}
			// A round trip through the driver's loop from a's env: the
			// update was handled.
			if _, err := actor.AskAs[*messages.SparkAppConfig](ctx, a.driver, &messages.RetrieveSparkAppConfig{}); err != nil {
				t.Fatal(err)
			}
			if ex, _ := executor(d, "b"); ex.FreeCores != 0 {
				t.Fatalf("after a's task ended %v, idle executor b still has %d free core(s): the task waits for the next revive", state, ex.FreeCores)
			}
			relaunch := b.nextLaunch(t)
			if err := b.driver.Send(&messages.StatusUpdate{ExecutorId: "b", TaskId: relaunch.TaskId,
				State: messages.TaskState_TASK_STATE_FINISHED, Result: []byte("x"), TaskCpus: 1}); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}
