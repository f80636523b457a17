package endpoints

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// blockedTaskName is a task that tells blockedStarted it runs and returns
// when its context is cancelled, with the context's cause.
const blockedTaskName = "test.internal.blocked"

var blockedStarted = make(chan struct{}, 1)

func init() {
	RegisterTask(blockedTaskName, func(ctx context.Context, _ TaskContext, _ []byte) ([]byte, error) {
		blockedStarted <- struct{}{}
		<-ctx.Done()
		return nil, context.Cause(ctx)
	})
}

// Stopping the runner cancels the task that runs, with the executor's
// stop as the cause, and the task reports KILLED with it: each task's
// context is cancelled through the runner, not through a parent.
func TestTaskRunnerStopCancelsRunningTask(t *testing.T) {
	env, err := actor.NewEnv("runner-test", actor.NewConf())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defer func() {
		if err := env.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}()
	updates := make(chan *messages.StatusUpdate, 4)
	r := actor.NewRouter()
	actor.Handle(r, func(_ *actor.Context, m *messages.StatusUpdate) error {
		updates <- m
		return nil
	})
	driver, err := env.RegisterEndpoint("driver", r)
	if err != nil {
		t.Fatal(err)
	}
	runner := newTaskRunner("1", driver, 1, 1<<20, &dependencies{}, zerolog.Nop())
	runner.launch(&messages.LaunchTask{TaskId: 7, TaskName: blockedTaskName, Cpus: 1})
	next := func(what string) *messages.StatusUpdate {
		t.Helper()
		select {
		case u := <-updates:
			return u
		case <-ctx.Done():
			t.Fatalf("no %s update", what)
			return nil
		}
	}
	if u := next("RUNNING"); u.GetTaskId() != 7 || u.GetState() != messages.TaskState_TASK_STATE_RUNNING {
		t.Fatalf("first update %v, want task 7 RUNNING", u)
	}
	select {
	case <-blockedStarted:
	case <-ctx.Done():
		t.Fatal("the task did not start")
	}
	// A task that stop did not cancel would still run when stop gives up
	// waiting, and never report.
	start := time.Now()
	runner.stop(10 * time.Second)
	if took := time.Since(start); took >= 10*time.Second {
		t.Fatalf("stop waited %v: the running task was not cancelled", took)
	}
	u := next("final")
	if u.GetTaskId() != 7 || u.GetState() != messages.TaskState_TASK_STATE_KILLED || u.GetError() != errExecutorStopped.Error() {
		t.Fatalf("final update %v, want task 7 KILLED with %q", u, errExecutorStopped)
	}
}
