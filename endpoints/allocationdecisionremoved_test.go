package endpoints_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// The ExecutorAllocationManager logs each decision and keeps it for the
// driver UI. An executor it saw idle and meant to release, but that took a
// task before the release (and so stays, as Spark's force = false), must
// not be reported as removed.
// Before, the decision and the log line named it removed.
func TestAllocationDecisionsSayOnlyWhatWasReleased(t *testing.T) {
	nw := memNetwork()
	env := nw.driverEnv(t, testConf(endpoints.KeyReviveInterval, "1h"))
	t.Cleanup(func() { _ = env.Shutdown(context.Background()) })

	var armed atomic.Bool
	var inject atomic.Pointer[func()]
	hook := func() {
		if !armed.Load() {
			return
		}
		buf := make([]byte, 8<<10)
		buf = buf[:runtime.Stack(buf, false)]
		if strings.Contains(string(buf), "endpoints.(*Driver).allocationInput") && armed.CompareAndSwap(true, false) {
			(*inject.Load())()
		}
	}
	cm := newFakeClusterManager()
	rec := newRecorder()
	d, err := endpoints.NewDriver(env, endpoints.WithClusterManager(cm), endpoints.WithLockRelease(hook), endpoints.WithListener(rec))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	a := newFakeExecutor(t, nw, d.URL())
	if err := a.register("a", "h", 1); err != nil {
		t.Fatal(err)
	}
	if err := a.driver.Send(&messages.LaunchedExecutor{ExecutorId: "a"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := actor.AskAs[*messages.SparkAppConfig](ctx, a.driver, &messages.RetrieveSparkAppConfig{}); err != nil {
		t.Fatal(err)
	}

	jobDone := make(chan error, 1)
	launched := make(chan *messages.LaunchTask, 1)
	injected := func() {
		// On the manager's goroutine, once it saw a idle: a job's task
		// lands on a.
		go func() {
			_, err := d.RunJob(ctx, endpoints.EchoTaskName, [][]byte{[]byte("x")})
			jobDone <- err
		}()
		select {
		case lt := <-a.launches:
			launched <- lt
		case <-ctx.Done():
		}
	}
	inject.Store(&injected)

	cfg, err := endpoints.ParseAllocationConfig(testConf(endpoints.KeyDynamicAllocationEnabled, "true",
		endpoints.KeyDynamicAllocationExecutorIdleTimeout, "0"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := endpoints.NewExecutorAllocationManager(d, cfg, endpoints.WithAllocationInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	m.Start()
	receiveWithin(t, cm.requests, "the first step's request") // the step has ended
	m.Stop()
	var lt *messages.LaunchTask
	select {
	case lt = <-launched:
	default:
		t.Fatal("the hook did not launch a task on a")
	}
	if _, ok := executor(d, "a"); !ok {
		t.Fatal("executor a was released while it ran a task")
	}
	// a stayed: no decision, in the log or for the UI, may say it was
	// removed.
	for _, dec := range m.Status().Decisions {
		if dec.Kind == endpoints.DecisionRemove && slices.Contains(dec.Removed, "a") {
			t.Errorf("decision %q says executor a was removed; it was kept (it ran task %d)", dec.String(), lt.TaskId)
		}
	}
	if err := a.driver.Send(&messages.StatusUpdate{ExecutorId: "a", TaskId: lt.TaskId,
		State: messages.TaskState_TASK_STATE_FINISHED, Result: []byte("x"), TaskCpus: 1}); err != nil {
		t.Fatal(err)
	}
	if err := <-jobDone; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
