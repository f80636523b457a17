package endpoints_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// A task whose executor dies while it runs (it reported RUNNING; the
// executor's connection then closes: Spark's ExecutorProcessLost, whose
// causedByApp defaults to true) counts towards spark.task.maxFailures, as
// Spark's TaskSetManager.executorLost does: a task that crashes every
// executor it runs on fails its job after 4 attempts instead of killing
// executors forever. Here 4 executors in a row take the task, report it
// RUNNING and go away; a fifth does not get it. Before, no loss counted,
// and the task went on to a fifth executor, and on for ever.
func TestTaskThatKillsItsExecutorsFailsItsJob(t *testing.T) {
	nw := memNetwork()
	env := nw.driverEnv(t, testConf(endpoints.KeyReviveInterval, "1h"))
	t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
	d, err := endpoints.NewDriver(env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := d.RunJob(ctx, endpoints.EchoTaskName, [][]byte{[]byte("crash")})
		done <- err
	}()
	for i, id := range []string{"e1", "e2", "e3", "e4"} {
		f := newFakeExecutor(t, nw, d.URL())
		if err := f.register(id, "h", 1); err != nil {
			t.Fatal(err)
		}
		if err := f.driver.Send(&messages.LaunchedExecutor{ExecutorId: id}); err != nil {
			t.Fatal(err)
		}
		lt := f.nextLaunch(t)
		if int(lt.Attempt) != i {
			t.Fatalf("attempt %d on %s; want %d", lt.Attempt, id, i)
		}
		if err := f.driver.Send(&messages.StatusUpdate{ExecutorId: id, TaskId: lt.TaskId,
			State: messages.TaskState_TASK_STATE_RUNNING, TaskCpus: 1}); err != nil {
			t.Fatal(err)
		}
		if err := f.env.Shutdown(ctx); err != nil { // the process dies
			t.Fatal(err)
		}
		if err := d.WaitForExecutorsGone(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	fifth := newFakeExecutor(t, nw, d.URL())
	if err := fifth.register("e5", "h", 1); err != nil {
		t.Fatal(err)
	}
	if err := fifth.driver.Send(&messages.LaunchedExecutor{ExecutorId: "e5"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, endpoints.ErrJobAborted) {
			t.Fatalf("RunJob = %v; want the job aborted after 4 lost attempts", err)
		}
	case lt := <-fifth.launches:
		t.Fatalf("attempt %d of a task that took down 4 executors launched on a fifth: executor losses never count towards %s",
			lt.Attempt, endpoints.KeyTaskMaxFailures)
	}
}
