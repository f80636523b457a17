package endpoints_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

func TestTasksSpreadOverExecutorsAndEveryResultIsCollected(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 4, 2)
		const n = 400
		payloads := make([][]byte, n)
		for i := range payloads {
			payloads[i] = []byte(fmt.Sprintf("p%03d", i))
		}
		res, err := runJob(t, c.Driver, endpoints.EchoTaskName, payloads)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != n {
			t.Fatalf("%d results, want %d", len(res), n)
		}
		for i := range res {
			if !bytes.Equal(res[i], payloads[i]) {
				t.Fatalf("result %d = %q, want %q", i, res[i], payloads[i])
			}
		}
		// Every executor ran some of them.
		ran, err := runJob(t, c.Driver, "test.executor", make([][]byte, 64))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, r := range ran {
			seen[string(r)]++
		}
		if len(seen) != 4 {
			t.Fatalf("tasks ran on %v; want all 4 executors", seen)
		}
		evs := c.rec.waitFor(t, "both JobEnds", func(evs []endpoints.Event) bool {
			return countEvents[endpoints.JobEnd](evs, nil) == 2
		})
		if s, e := countEvents[endpoints.TaskStart](evs, nil), countEvents(evs, func(e endpoints.TaskEnd) bool {
			return e.State == messages.TaskState_TASK_STATE_FINISHED
		}); s != n+64 || e != n+64 {
			t.Fatalf("%d TaskStart and %d finished TaskEnd events, want %d", s, e, n+64)
		}
		for _, ex := range c.Driver.Executors() {
			if ex.FreeCores != 2 {
				t.Fatalf("executor %s has %d free cores after the jobs, want 2", ex.ID, ex.FreeCores)
			}
		}
	})
}

func TestPanickingTaskIsRetriedThenFailsItsJob(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 2, 2)
		_, err := runJob(t, c.Driver, "test.panic", [][]byte{[]byte("x-17")})
		var je *endpoints.JobAbortedError
		if !errors.As(err, &je) || !errors.Is(err, endpoints.ErrJobAborted) || !errors.Is(err, endpoints.ErrTaskFailed) ||
			!strings.Contains(err.Error(), "boom: x-17") || !strings.Contains(err.Error(), "failed 4 times") {
			t.Fatalf("RunJob = %v; want a job aborted after 4 failures with the panic text", err)
		}
		evs := c.rec.waitFor(t, "JobEnd", func(evs []endpoints.Event) bool {
			return countEvents[endpoints.JobEnd](evs, nil) == 1
		})
		if n := countEvents(evs, func(e endpoints.TaskEnd) bool { return e.State == messages.TaskState_TASK_STATE_FAILED }); n != 4 {
			t.Fatalf("%d failed attempts, want spark.task.maxFailures = 4", n)
		}
		// The executors survived the panics, and a task that fails twice
		// then succeeds completes its job.
		res, err := runJob(t, c.Driver, "test.flaky", [][]byte{[]byte("a"), []byte("b")})
		if err != nil || string(res[0]) != "ok:a" || string(res[1]) != "ok:b" {
			t.Fatalf("flaky job = %q, %v", res, err)
		}
		if len(c.Driver.Executors()) != 2 {
			t.Fatalf("executors = %+v", c.Driver.Executors())
		}
	})
}

func TestMaxFailuresIsConfigurable(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(endpoints.KeyTaskMaxFailures, "2"), 1, 1)
	if _, err := runJob(t, c.Driver, "test.flaky", [][]byte{[]byte("a")}); !errors.Is(err, endpoints.ErrTaskFailed) ||
		!strings.Contains(err.Error(), "flaky attempt 1") {
		t.Fatalf("RunJob = %v; want a failure after 2 attempts", err)
	}
}

func TestOversizeTaskAbortsItsJob(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(actor.KeyMessageMaxSize, "1"), 2, 1)
		big := bytes.Repeat([]byte{'x'}, 1<<20)
		_, err := runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{[]byte("small"), big})
		if !errors.Is(err, endpoints.ErrTaskTooLarge) || !errors.Is(err, endpoints.ErrJobAborted) ||
			!strings.Contains(err.Error(), "exceeds max allowed: spark.rpc.message.maxSize (1048576 bytes, of which 256 are kept for "+
				"the message's envelope). Consider increasing spark.rpc.message.maxSize or using broadcast variables for large values.") {
			t.Fatalf("RunJob = %v; want an abort naming spark.rpc.message.maxSize", err)
		}
		// The cluster is still usable.
		res, err := runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{[]byte("ok")})
		if err != nil || string(res[0]) != "ok" {
			t.Fatalf("next job = %q, %v", res, err)
		}
		testutil.Eventually(t, testTimeout, "all cores free", func() bool {
			for _, ex := range c.Driver.Executors() {
				if ex.FreeCores != 1 {
					return false
				}
			}
			return true
		})
	})
}

// A result that would make its StatusUpdate reach spark.rpc.message.maxSize
// fails its task with the size in the error, on every attempt, while a
// result just below the limit comes back.
func TestOversizeResultFailsItsTask(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(actor.KeyMessageMaxSize, "1"), 1, 1)
		_, err := runJob(t, c.Driver, "test.repeat", [][]byte{[]byte("x1048576")})
		if !errors.Is(err, endpoints.ErrTaskFailed) ||
			!strings.Contains(err.Error(), "result was 1048576 bytes, which exceeds max allowed: spark.rpc.message.maxSize (1048576 bytes") {
			t.Fatalf("RunJob = %v; want the task failed for its result's size", err)
		}
		// 1 MiB less the StatusUpdate's other fields and the frame's
		// envelope fits.
		res, err := runJob(t, c.Driver, "test.repeat", [][]byte{[]byte("x1048000")})
		if err != nil || len(res) != 1 || len(res[0]) != 1048000 {
			t.Fatalf("RunJob of a result below the limit = %d results, %v", len(res), err)
		}
	})
}

// Results and tasks whose messages fit spark.rpc.message.maxSize without
// the transport's envelope and not with it come back or fail their job,
// each within the job's time: none is refused at the send, which left the
// job waiting for a result that never came and removed the executors a
// task could not be sent to.
func TestResultsAndTasksAtTheEdgeOfTheLimit(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(actor.KeyMessageMaxSize, "1", endpoints.KeyTaskMaxFailures, "1"), 2, 1)
		for _, n := range []int{1<<20 - 300, 1<<20 - 200, 1<<20 - 100, 1<<20 - 64, 1<<20 - 20, 1<<20 - 1} {
			res, err := runJob(t, c.Driver, "test.repeat", [][]byte{[]byte(fmt.Sprintf("x%d", n))})
			if err != nil && (!errors.Is(err, endpoints.ErrTaskFailed) || !strings.Contains(err.Error(), "result")) ||
				err == nil && len(res[0]) != n {
				t.Fatalf("a result of %d bytes: %d results, %v; want it back or the task failed for its size", n, len(res), err)
			}
			_, err = runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{bytes.Repeat([]byte{'q'}, n)})
			if err != nil && !errors.Is(err, endpoints.ErrTaskTooLarge) && !errors.Is(err, endpoints.ErrTaskFailed) {
				t.Fatalf("a task of %d bytes: %v; want it run or its job aborted for its size", n, err)
			}
			if got := len(c.Driver.Executors()); got != 2 {
				t.Fatalf("after a task of %d bytes: %d executors, want 2", n, got)
			}
		}
	})
}

// An attempt still running when the driver stops (one of a job that was
// aborted, whose kill its executor has not answered yet) ends, for the
// listeners, as KILLED: every TaskStart has its TaskEnd, so that an event
// log does not show a finished application with a task still running.
func TestDriverStopEndsTheAttemptsStillRunning(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(endpoints.KeyTaskMaxFailures, "1"), 2, 1)
	key, gate := gates.New(t)
	_, err := runJob(t, c.Driver, "test.failOrStall", [][]byte{[]byte("fail|" + key), []byte(key)})
	if !errors.Is(err, endpoints.ErrJobAborted) {
		t.Fatalf("RunJob = %v, want the job aborted", err)
	}
	select {
	case <-gate.Arrived(1): // the stalled attempt runs on its executor
	case <-time.After(testTimeout):
		t.Fatal("the stalled attempt never ran")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.Driver.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	evs, _ := c.rec.snapshot()
	started, ended := map[int64]bool{}, map[int64]endpoints.TaskEnd{}
	for _, ev := range evs {
		switch e := ev.(type) {
		case endpoints.TaskStart:
			started[e.TaskID] = true
		case endpoints.TaskEnd:
			ended[e.TaskID] = e
		}
	}
	for id := range started {
		if _, ok := ended[id]; !ok {
			t.Errorf("task %d started and never ended:%s", id, summarize(evs))
		}
	}
	if n := countEvents(evs, func(e endpoints.TaskEnd) bool { return e.State == messages.TaskState_TASK_STATE_KILLED }); n != 1 {
		t.Errorf("%d KILLED TaskEnds, want the stalled attempt's:%s", n, summarize(evs))
	}
}

func TestCancelledJobKillsItsTasks(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 2, 1)
		key, _ := gates.New(t)
		ctx, cancel := context.WithCancelCause(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := c.Driver.RunJob(ctx, "test.gated", gatedPayloads(key, 4))
			errc <- err
		}()
		c.rec.waitFor(t, "tasks running", func(evs []endpoints.Event) bool { return countEvents[endpoints.TaskStart](evs, nil) == 2 })
		stop := errors.New("enough")
		cancel(stop)
		if err := <-errc; !errors.Is(err, stop) {
			t.Fatalf("RunJob = %v; want the cancel cause", err)
		}
		c.rec.waitFor(t, "two killed tasks", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.TaskEnd) bool { return e.State == messages.TaskState_TASK_STATE_KILLED }) == 2
		})
		res, err := runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{[]byte("1"), []byte("2")})
		if err != nil || len(res) != 2 {
			t.Fatalf("next job = %q, %v", res, err)
		}
	})
}

func TestRunJobValidation(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(), 1, 1)
	if _, err := runJob(t, c.Driver, "no.such.task", [][]byte{nil}); !errors.Is(err, endpoints.ErrUnknownTask) {
		t.Fatalf("unknown task: %v", err)
	}
	res, err := runJob(t, c.Driver, endpoints.NoopTaskName, nil)
	if err != nil || len(res) != 0 {
		t.Fatalf("empty job = %v, %v", res, err)
	}
	if err := endpoints.RunExecutor(context.Background(), endpoints.ExecutorConfig{}); !errors.Is(err, endpoints.ErrInvalidConfig) {
		t.Fatalf("RunExecutor with an empty config = %v", err)
	}
}

// A KillTask sent to the driver reaches the task's executor, which cancels
// the task's context; a killed task runs again (it does not count as a
// failure).
func TestKillTaskThroughTheDriver(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 1, 1)
		key, gate := gates.New(t)
		type result struct {
			res [][]byte
			err error
		}
		done := make(chan result, 1)
		go func() {
			res, err := runJob(t, c.Driver, "test.gated", gatedPayloads(key, 1))
			done <- result{res, err}
		}()
		evs := c.rec.waitFor(t, "task running", func(evs []endpoints.Event) bool { return countEvents[endpoints.TaskStart](evs, nil) == 1 })
		var start endpoints.TaskStart
		for _, ev := range evs {
			if e, ok := ev.(endpoints.TaskStart); ok {
				start = e
			}
		}
		if err := c.Driver.Ref().Send(&messages.KillTask{TaskId: start.TaskID, ExecutorId: start.ExecutorID,
			InterruptThread: true, Reason: "killed by test"}); err != nil {
			t.Fatal(err)
		}
		c.rec.waitFor(t, "the task killed and relaunched", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.TaskEnd) bool {
				return e.State == messages.TaskState_TASK_STATE_KILLED && e.Error == "killed by test"
			}) == 1 && countEvents(evs, func(e endpoints.TaskStart) bool { return e.Attempt == 1 }) == 1
		})
		gate.Open()
		if r := <-done; r.err != nil || len(r.res) != 1 {
			t.Fatalf("job = %q, %v", r.res, r.err)
		}
	})
}

// Driver.KillTask kills one running task; it runs again and its job
// completes.
func TestDriverKillTask(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 1, 1)
		if err := c.Driver.KillTask(12345, "nothing"); !errors.Is(err, endpoints.ErrTaskNotRunning) {
			t.Fatalf("KillTask of an unknown task = %v", err)
		}
		key, gate := gates.New(t)
		type result struct {
			res [][]byte
			err error
		}
		done := make(chan result, 1)
		go func() {
			res, err := runJob(t, c.Driver, "test.gated", gatedPayloads(key, 1))
			done <- result{res, err}
		}()
		evs := c.rec.waitFor(t, "task running", func(evs []endpoints.Event) bool { return countEvents[endpoints.TaskStart](evs, nil) == 1 })
		var start endpoints.TaskStart
		for _, ev := range evs {
			if e, ok := ev.(endpoints.TaskStart); ok {
				start = e
			}
		}
		if err := c.Driver.KillTask(start.TaskID, "killed by test"); err != nil {
			t.Fatal(err)
		}
		c.rec.waitFor(t, "the task killed and relaunched", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.TaskEnd) bool {
				return e.TaskID == start.TaskID && e.State == messages.TaskState_TASK_STATE_KILLED && e.Error == "killed by test"
			}) == 1 && countEvents(evs, func(e endpoints.TaskStart) bool { return e.Attempt == 1 }) == 1
		})
		if err := c.Driver.KillTask(start.TaskID, "again"); !errors.Is(err, endpoints.ErrTaskNotRunning) {
			t.Fatalf("KillTask of an ended task = %v", err)
		}
		gate.Open()
		if r := <-done; r.err != nil || len(r.res) != 1 {
			t.Fatalf("job = %q, %v", r.res, r.err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.Driver.KillTask(start.TaskID, "late"); !errors.Is(err, endpoints.ErrDriverStopped) {
			t.Fatalf("KillTask after Stop = %v", err)
		}
	})
}

func TestTaskEndCarriesResultSizeAndRunTime(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 2, 2)
		if _, err := runJob(t, c.Driver, "test.repeat", [][]byte{[]byte("a100"), []byte("b2000")}); err != nil {
			t.Fatal(err)
		}
		evs := c.rec.waitFor(t, "JobEnd", func(evs []endpoints.Event) bool {
			return countEvents[endpoints.JobEnd](evs, nil) == 1
		})
		want := map[int]int64{0: 100, 1: 2000}
		n := countEvents(evs, func(e endpoints.TaskEnd) bool {
			if e.ResultSize != want[e.Partition] || e.RunTime <= 0 || e.RunTime > e.Duration {
				t.Errorf("partition %d: ResultSize %d, RunTime %v (duration %v); want %d bytes and 0 < RunTime <= duration",
					e.Partition, e.ResultSize, e.RunTime, e.Duration, want[e.Partition])
			}
			return true
		})
		if n != 2 {
			t.Fatalf("%d TaskEnd events, want 2", n)
		}
	})
}
