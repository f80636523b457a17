package endpoints_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Dynamic allocation releases idle executors only: as Spark's
// ExecutorAllocationManager, whose killExecutors(force = false) skips an
// executor that became busy after it was seen idle. Here executor a is
// idle when the manager reads the driver's state (the driver's lock hook
// fires as allocationInput releases the lock); a task is then launched on
// it before the manager releases it. The manager leaves a alone. Before,
// it removed a, and a's running task was lost.
func TestAllocationNeverReleasesABusyExecutor(t *testing.T) {
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
	ex, ok := executor(d, "a")
	if !ok {
		evs, _ := rec.snapshot()
		t.Fatalf("dynamic allocation released executor a while it ran task %d; events:%s", lt.TaskId, summarize(evs))
	}
	if ex.FreeCores != 0 {
		t.Fatalf("executor a has %d free cores while its task runs", ex.FreeCores)
	}
	select {
	case ids := <-cm.kills:
		t.Fatalf("asked the cluster manager to kill %v", ids)
	default:
	}
	if err := a.driver.Send(&messages.StatusUpdate{ExecutorId: "a", TaskId: lt.TaskId,
		State: messages.TaskState_TASK_STATE_FINISHED, Result: []byte("x"), TaskCpus: 1}); err != nil {
		t.Fatal(err)
	}
	if err := <-jobDone; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
