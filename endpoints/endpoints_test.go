package endpoints_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// The handshake step by step, with a hand-made executor: registered with
// free cores 0, no task before LaunchedExecutor, tasks after it.
func TestHandshakeFreeCoresOnlyAfterLaunchedExecutor(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		env := nw.driverEnv(t, testConf())
		t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
		rec := newRecorder()
		d, err := endpoints.NewDriver(env, endpoints.WithListener(rec))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Stop(context.Background()) })
		if !strings.HasPrefix(d.URL(), "spark://CoarseGrainedScheduler@") {
			t.Fatalf("URL = %q", d.URL())
		}
		f := newFakeExecutor(t, nw, d.URL())
		if err := f.register("7", "host-a", 3); err != nil {
			t.Fatalf("register: %v", err)
		}
		ex, ok := executor(d, "7")
		if !ok || ex.FreeCores != 0 || ex.TotalCores != 3 || ex.Ready || ex.Host != "host-a" || ex.Address.IsZero() {
			t.Fatalf("after RegisterExecutor: %+v (found %v); want 3 total cores, 0 free, not ready", ex, ok)
		}
		if d.TotalCores() != 3 {
			t.Fatalf("TotalCores = %d, want 3", d.TotalCores())
		}
		rec.waitFor(t, "ExecutorAdded", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.ExecutorAdded) bool { return e.ExecutorID == "7" && e.Cores == 3 }) == 1
		})

		type result struct {
			res [][]byte
			err error
		}
		done := make(chan result, 1)
		go func() {
			res, err := runJob(t, d, endpoints.EchoTaskName, [][]byte{[]byte("a")})
			done <- result{res, err}
		}()
		rec.waitFor(t, "JobStart", func(evs []endpoints.Event) bool {
			return countEvents[endpoints.JobStart](evs, nil) == 1
		})
		// Revive offers happen every second and on submission; with no
		// free cores nothing is launched. A round trip through the driver's
		// loop shows the ReviveOffers of the submission was handled.
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if _, err := env.RemoteRef(env.Address(), endpoints.DriverEndpointName).AskSync(ctx, &messages.RetrieveSparkAppConfig{}); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-f.launches:
			t.Fatalf("task %d launched before LaunchedExecutor", m.TaskId)
		default:
		}

		if err := f.driver.Send(&messages.LaunchedExecutor{ExecutorId: "7"}); err != nil {
			t.Fatal(err)
		}
		lt := f.nextLaunch(t)
		if lt.TaskName != endpoints.EchoTaskName || string(lt.Payload) != "a" || lt.Partition != 0 || lt.Attempt != 0 {
			t.Fatalf("LaunchTask = %v", lt)
		}
		eventually(t, "a core taken", func() bool { ex, _ := executor(d, "7"); return ex.Ready && ex.FreeCores == 2 })
		if err := f.driver.Send(&messages.StatusUpdate{ExecutorId: "7", TaskId: lt.TaskId,
			State: messages.TaskState_TASK_STATE_FINISHED, Result: []byte("result-a"), TaskCpus: 1}); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.err != nil || len(r.res) != 1 || string(r.res[0]) != "result-a" {
			t.Fatalf("RunJob = %q, %v", r.res, r.err)
		}
		eventually(t, "cores freed", func() bool { ex, _ := executor(d, "7"); return ex.FreeCores == 3 })
	})
}

// The whole handshake with real executors: fetcher, registration,
// RegisteredExecutor, LaunchedExecutor.
func TestExecutorsRegisterAndGetTheirCores(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf("spark.app.name", "handshake"), 3, 2)
		exs := c.Driver.Executors()
		if len(exs) != 3 {
			t.Fatalf("executors = %+v", exs)
		}
		for i, ex := range exs {
			if ex.ID != fmt.Sprint(i+1) || !ex.Ready || ex.TotalCores != 2 || ex.FreeCores != 2 || ex.Address.IsZero() ||
				ex.RegistrationTime.IsZero() {
				t.Errorf("executor %d = %+v", i, ex)
			}
		}
		if got := c.Driver.TotalCores(); got != 6 {
			t.Errorf("TotalCores = %d, want 6", got)
		}
		c.rec.waitFor(t, "3 ExecutorAdded events", func(evs []endpoints.Event) bool {
			return countEvents[endpoints.ExecutorAdded](evs, nil) == 3
		})
	})
}

func TestDuplicateExecutorIDIsRefused(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 1, 1)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		err := endpoints.RunExecutor(ctx, endpoints.ExecutorConfig{DriverURL: c.Driver.URL(), ExecutorID: "1", Cores: 1},
			endpoints.WithEnvFactory(nw.factory))
		var ee *endpoints.ExitError
		if !errors.As(err, &ee) || ee.Code != 1 || !strings.Contains(err.Error(), "Duplicate executor ID: 1") ||
			!strings.Contains(ee.Reason, "Cannot register with driver") {
			t.Fatalf("RunExecutor = %v; want an *ExitError with code 1 and the reason", err)
		}
		if ex, ok := executor(c.Driver, "1"); !ok || !ex.Ready {
			t.Fatalf("the first executor 1 is gone: %+v", c.Driver.Executors())
		}
	})
}

func TestExcludedHostIsRefused(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 1, 1, endpoints.WithExcludedHosts([]string{"bad-host"}))
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		err := endpoints.RunExecutor(ctx, endpoints.ExecutorConfig{DriverURL: c.Driver.URL(), ExecutorID: "9",
			Hostname: "bad-host", Cores: 1}, endpoints.WithEnvFactory(nw.factory))
		var ee *endpoints.ExitError
		if !errors.As(err, &ee) || ee.Code != 1 || !strings.Contains(err.Error(), "Executor is excluded due to failures: 9") {
			t.Fatalf("RunExecutor = %v; want an *ExitError with code 1 and the reason", err)
		}
		if _, ok := executor(c.Driver, "9"); ok {
			t.Fatal("the excluded executor was registered")
		}
	})
}

func TestRegistrationFailureWithoutDriverExitsWithCode1(t *testing.T) {
	nw := memNetwork()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	err := endpoints.RunExecutor(ctx, endpoints.ExecutorConfig{DriverURL: "spark://CoarseGrainedScheduler@nowhere:1",
		ExecutorID: "1", Cores: 1}, endpoints.WithEnvFactory(nw.factory), endpoints.WithExecutorConf(testConf()))
	var ee *endpoints.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || !errors.Is(err, actor.ErrConnectionClosed) {
		t.Fatalf("RunExecutor = %v; want an *ExitError with code 1 caused by the refused connection", err)
	}
}

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

func TestExecutorLostMidJobTasksRunElsewhere(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 3, 2)
		key, release := newGate(t)
		const n = 6
		payloads := gatedPayloads(key, n)
		type result struct {
			res [][]byte
			err error
		}
		done := make(chan result, 1)
		go func() {
			res, err := runJob(t, c.Driver, "test.gated", payloads)
			done <- result{res, err}
		}()
		c.rec.waitFor(t, "every task running", func(evs []endpoints.Event) bool {
			return countEvents[endpoints.TaskStart](evs, nil) == n
		})
		for _, ex := range c.Driver.Executors() {
			if ex.FreeCores != 0 {
				t.Fatalf("executor %s has %d free cores; want all busy", ex.ID, ex.FreeCores)
			}
		}
		// Executor 2's connection drops: its env goes away under it.
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := c.envs.env("2").Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		evs := c.rec.waitFor(t, "executor 2 removed and its tasks relaunched", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.ExecutorRemoved) bool { return e.ExecutorID == "2" }) == 1 &&
				countEvents(evs, func(e endpoints.TaskEnd) bool { return e.State == messages.TaskState_TASK_STATE_LOST }) == 2
		})
		var removed endpoints.ExecutorRemoved
		for _, ev := range evs {
			if e, ok := ev.(endpoints.ExecutorRemoved); ok {
				removed = e
			}
		}
		if removed.Reason != endpoints.ReasonDisassociated {
			t.Fatalf("loss reason = %q", removed.Reason)
		}
		release()
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		for i := range payloads {
			if !bytes.Equal(r.res[i], payloads[i]) {
				t.Fatalf("result %d = %q, want %q", i, r.res[i], payloads[i])
			}
		}
		evs = c.rec.waitFor(t, "JobEnd", func(evs []endpoints.Event) bool { return countEvents[endpoints.JobEnd](evs, nil) == 1 })
		finished := map[int]int{}
		for _, ev := range evs {
			if e, ok := ev.(endpoints.TaskEnd); ok && e.State == messages.TaskState_TASK_STATE_FINISHED {
				finished[e.Partition]++
				if e.ExecutorID == "2" {
					t.Errorf("partition %d finished on the lost executor", e.Partition)
				}
			}
		}
		for p := range n {
			if finished[p] != 1 {
				t.Errorf("partition %d finished %d times, want once", p, finished[p])
			}
		}
		if _, ok := executor(c.Driver, "2"); ok {
			t.Error("executor 2 is still registered")
		}
	})
}

// A result from an attempt whose executor was removed is ignored: the
// partition's result is the one of the attempt that ran elsewhere.
func TestLateResultOfALostExecutorIsIgnored(t *testing.T) {
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
		res, err := runJob(t, d, endpoints.EchoTaskName, [][]byte{[]byte("x")})
		done <- result{res, err}
	}()
	first := a.nextLaunch(t)
	if err := d.RemoveExecutor("a", "test removal"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.stops:
	case <-time.After(testTimeout):
		t.Fatal("removed executor got no StopExecutor")
	}
	if err := b.register("b", "h", 1); err != nil {
		t.Fatal(err)
	}
	if err := b.driver.Send(&messages.LaunchedExecutor{ExecutorId: "b"}); err != nil {
		t.Fatal(err)
	}
	second := b.nextLaunch(t)
	if second.Partition != 0 || second.Attempt != 1 || second.TaskId == first.TaskId {
		t.Fatalf("relaunch = %v after %v", second, first)
	}
	// The lost attempt's late result, then the real one.
	_ = a.driver.Send(&messages.StatusUpdate{ExecutorId: "a", TaskId: first.TaskId, State: messages.TaskState_TASK_STATE_FINISHED, Result: []byte("late")})
	_ = b.driver.Send(&messages.StatusUpdate{ExecutorId: "b", TaskId: second.TaskId, State: messages.TaskState_TASK_STATE_FINISHED, Result: []byte("real")})
	_ = b.driver.Send(&messages.StatusUpdate{ExecutorId: "b", TaskId: second.TaskId, State: messages.TaskState_TASK_STATE_FINISHED, Result: []byte("dup")})
	r := <-done
	if r.err != nil || string(r.res[0]) != "real" {
		t.Fatalf("RunJob = %q, %v; want the result of the live attempt", r.res, r.err)
	}
	eventually(t, "b's core freed once", func() bool { ex, _ := executor(d, "b"); return ex.FreeCores == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	// A round trip through the driver's loop: the duplicate has been handled.
	if _, err := d.Ref().AskSync(ctx, &messages.RetrieveSparkAppConfig{}); err != nil {
		t.Fatal(err)
	}
	if ex, _ := executor(d, "b"); ex.FreeCores != 1 {
		t.Fatalf("free cores = %d after a duplicate update, want 1", ex.FreeCores)
	}
}

func TestHeartbeatExpiryRemovesASilentExecutor(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		conf := testConf(endpoints.KeyHeartbeatInterval, "50ms", actor.KeyNetworkTimeout, "600ms",
			endpoints.KeyTimeoutInterval, "50ms")
		// The real executor heartbeats every 50ms (the driver's setting,
		// which it takes from the driver's properties).
		c := startCluster(t, nw, conf, 1, 1)
		silent := newFakeExecutor(t, nw, c.Driver.URL())
		if err := silent.register("silent", "h", 1); err != nil {
			t.Fatal(err)
		}
		evs := c.rec.waitFor(t, "the silent executor removed", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.ExecutorRemoved) bool { return e.ExecutorID == "silent" }) == 1
		})
		for _, ev := range evs {
			if e, ok := ev.(endpoints.ExecutorRemoved); ok {
				if e.ExecutorID != "silent" {
					t.Fatalf("executor %s removed too: %q", e.ExecutorID, e.Reason)
				}
				if !strings.HasPrefix(e.Reason, "Executor heartbeat timed out after ") || !strings.HasSuffix(e.Reason, " ms") {
					t.Fatalf("reason = %q", e.Reason)
				}
			}
		}
		select {
		case <-silent.stops:
		case <-time.After(testTimeout):
			t.Fatal("the silent executor got no StopExecutor")
		}
		if _, ok := executor(c.Driver, "1"); !ok {
			t.Fatal("the executor that heartbeats was removed")
		}
	})
}

func TestOversizeTaskAbortsItsJob(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(actor.KeyMessageMaxSize, "1"), 2, 1)
		big := bytes.Repeat([]byte{'x'}, 1<<20)
		_, err := runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{[]byte("small"), big})
		if !errors.Is(err, endpoints.ErrTaskTooLarge) || !errors.Is(err, endpoints.ErrJobAborted) ||
			!strings.Contains(err.Error(), "exceeds max allowed: spark.rpc.message.maxSize (1048576 bytes). "+
				"Consider increasing spark.rpc.message.maxSize or using broadcast variables for large values.") {
			t.Fatalf("RunJob = %v; want an abort naming spark.rpc.message.maxSize", err)
		}
		// The cluster is still usable.
		res, err := runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{[]byte("ok")})
		if err != nil || string(res[0]) != "ok" {
			t.Fatalf("next job = %q, %v", res, err)
		}
		eventually(t, "all cores free", func() bool {
			for _, ex := range c.Driver.Executors() {
				if ex.FreeCores != 1 {
					return false
				}
			}
			return true
		})
	})
}

func TestStopExecutorsStopsEveryExecutor(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 3, 1)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if _, err := actor.AskAs[*messages.BoolReply](ctx, c.Driver.Ref(), &messages.StopExecutors{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "every executor returned", func() bool { return len(c.ExecutorErrors()) == 3 })
		for id, err := range c.ExecutorErrors() {
			if err != nil {
				t.Errorf("executor %s: %v; want a clean stop", id, err)
			}
		}
		if err := c.Driver.WaitForExecutorsGone(ctx, "1", "2", "3"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestDriverStopStopsExecutorsAndJobs(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(), 2, 1)
	key, _ := newGate(t)
	errc := make(chan error, 1)
	go func() {
		_, err := runJob(t, c.Driver, "test.gated", gatedPayloads(key, 2))
		errc <- err
	}()
	c.rec.waitFor(t, "tasks running", func(evs []endpoints.Event) bool { return countEvents[endpoints.TaskStart](evs, nil) == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, endpoints.ErrDriverStopped) {
		t.Fatalf("running job = %v; want ErrDriverStopped", err)
	}
	if _, err := c.Driver.RunJob(ctx, endpoints.NoopTaskName, [][]byte{nil}); !errors.Is(err, endpoints.ErrDriverStopped) {
		t.Fatalf("RunJob after Stop = %v", err)
	}
	if errs := c.ExecutorErrors(); len(errs) != 2 || errs["1"] != nil || errs["2"] != nil {
		t.Fatalf("executors returned %v; want two clean stops", errs)
	}
}

func TestDriverGoingAwayMakesExecutorsExit(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 2, 1)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := c.env.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		eventually(t, "every executor returned", func() bool { return len(c.ExecutorErrors()) == 2 })
		for id, err := range c.ExecutorErrors() {
			var ee *endpoints.ExitError
			if !errors.As(err, &ee) || ee.Code != 1 || !strings.HasPrefix(ee.Reason, "Driver ") ||
				!strings.HasSuffix(ee.Reason, " disassociated! Shutting down.") {
				t.Errorf("executor %s: %v; want exit code 1, driver disassociated", id, err)
			}
		}
	})
}

func TestCancelledJobKillsItsTasks(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 2, 1)
		key, _ := newGate(t)
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

func TestExecutorContextCancelStopsGracefully(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 0, 1)
		ectx, ecancel := context.WithCancel(context.Background())
		defer ecancel()
		c.StartExecutor(ectx, endpoints.ExecutorConfig{DriverURL: c.Driver.URL(), ExecutorID: "g", Cores: 2},
			endpoints.WithEnvFactory(nw.factory))
		wctx, wcancel := context.WithTimeout(context.Background(), testTimeout)
		defer wcancel()
		if err := c.Driver.WaitForExecutors(wctx, 1); err != nil {
			t.Fatal(err)
		}
		key, release := newGate(t)
		type result struct {
			res [][]byte
			err error
		}
		done := make(chan result, 1)
		go func() {
			res, err := runJob(t, c.Driver, "test.gated", gatedPayloads(key, 2))
			done <- result{res, err}
		}()
		c.rec.waitFor(t, "tasks running", func(evs []endpoints.Event) bool { return countEvents[endpoints.TaskStart](evs, nil) == 2 })
		ecancel()
		eventually(t, "executor decommissioning", func() bool { ex, _ := executor(c.Driver, "g"); return ex.Decommissioning })
		if errs := c.ExecutorErrors(); len(errs) != 0 {
			t.Fatalf("executor returned before its tasks finished: %v", errs)
		}
		release()
		r := <-done
		if r.err != nil || len(r.res) != 2 {
			t.Fatalf("job = %q, %v; want the running tasks to finish", r.res, r.err)
		}
		eventually(t, "executor returned", func() bool { return len(c.ExecutorErrors()) == 1 })
		if err := c.ExecutorErrors()["g"]; err != nil {
			t.Fatalf("RunExecutor = %v; want nil", err)
		}
		c.rec.waitFor(t, "executor removed", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.ExecutorRemoved) bool { return e.ExecutorID == "g" }) == 1
		})
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

func TestRegisterTaskPanicsOnDuplicate(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	endpoints.RegisterTask(endpoints.EchoTaskName, func(context.Context, endpoints.TaskContext, []byte) ([]byte, error) { return nil, nil })
}

type allocator struct{ lost chan string }

func (a allocator) ExecutorLost(id, reason string) { a.lost <- id + ": " + reason }

func TestAllocatorIsToldOfLostExecutors(t *testing.T) {
	a := allocator{lost: make(chan string, 4)}
	c := startCluster(t, memNetwork(), testConf(), 2, 1, endpoints.WithExecutorAllocator(a))
	if err := c.Driver.KillExecutor("2"); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-a.lost:
		if got != "2: "+endpoints.ReasonKilled {
			t.Fatalf("ExecutorLost(%s)", got)
		}
	case <-time.After(testTimeout):
		t.Fatal("allocator not told")
	}
	eventually(t, "executor 2 returned", func() bool { _, ok := c.ExecutorErrors()["2"]; return ok })
	if err := c.ExecutorErrors()["2"]; err != nil {
		t.Fatalf("killed executor returned %v; want a clean stop", err)
	}
}

// A KillTask sent to the driver reaches the task's executor, which cancels
// the task's context; a killed task runs again (it does not count as a
// failure).
func TestKillTaskThroughTheDriver(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 1, 1)
		key, release := newGate(t)
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
		release()
		if r := <-done; r.err != nil || len(r.res) != 1 {
			t.Fatalf("job = %q, %v", r.res, r.err)
		}
	})
}

// exitExecutor runs once: an executor told to stop does not also exit with
// code 1 when the driver then goes away.
func TestStoppingExecutorIgnoresTheDriverLeaving(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(), 1, 1)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := c.Driver.Ref().AskSync(ctx, &messages.StopExecutors{}); err != nil {
		t.Fatal(err)
	}
	if err := c.env.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the executor returned", func() bool { return len(c.ExecutorErrors()) == 1 })
	if err := c.ExecutorErrors()["1"]; err != nil {
		t.Fatalf("RunExecutor = %v; want a clean stop", err)
	}
}

// lineWriter sends every log line to a channel.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) {
	select {
	case w <- string(p):
	default:
	}
	return len(p), nil
}

// The config fetcher looks the driver up 3 times: an executor started
// before the driver's endpoint exists registers once it does, and one whose
// driver never appears exits with code 1.
func TestDriverLookupIsRetried(t *testing.T) {
	nw := memNetwork()
	env := nw.driverEnv(t, testConf())
	t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
	url := actor.EndpointAddress{Address: env.Address(), Name: endpoints.DriverEndpointName}.String()
	lines := make(lineWriter, 256)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- endpoints.RunExecutor(ctx, endpoints.ExecutorConfig{DriverURL: url, ExecutorID: "1", Cores: 1},
			endpoints.WithEnvFactory(nw.factory), endpoints.WithLogger(zerolog.New(lines)))
	}()
	for waiting := true; waiting; {
		select {
		case line := <-lines:
			waiting = !strings.Contains(line, "driver lookup failed; retrying") || !strings.Contains(line, `"attempt":1`)
		case <-ctx.Done():
			t.Fatal("the first lookup did not fail")
		}
	}
	d, err := endpoints.NewDriver(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WaitForExecutors(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := d.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("RunExecutor = %v", err)
	}

	// No driver endpoint at all: three lookups, then exit code 1.
	err = endpoints.RunExecutor(ctx, endpoints.ExecutorConfig{DriverURL: "spark://NoDriver@" + env.Address().HostPort(),
		ExecutorID: "2", Cores: 1}, endpoints.WithEnvFactory(nw.factory))
	var ee *endpoints.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || !errors.Is(err, actor.ErrEndpointNotFound) {
		t.Fatalf("RunExecutor = %v; want exit code 1, endpoint not found", err)
	}
}

// An executor whose heartbeats keep failing exits with code 56 and tells
// the driver.
func TestHeartbeatFailuresMakeTheExecutorExit(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(endpoints.KeyHeartbeatInterval, "20ms", endpoints.KeyHeartbeatMaxFailures, "3"), 1, 1)
		hb, ok := c.env.Endpoint(endpoints.HeartbeatEndpointName)
		if !ok {
			t.Fatal("no HeartbeatReceiver on the driver's env")
		}
		if err := c.env.Stop(hb); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the executor returned", func() bool { return len(c.ExecutorErrors()) == 1 })
		var ee *endpoints.ExitError
		if err := c.ExecutorErrors()["1"]; !errors.As(err, &ee) || ee.Code != endpoints.ExitCodeHeartbeatFailure ||
			ee.Reason != "Unable to send heartbeats to driver more than 3 times" {
			t.Fatalf("RunExecutor = %v; want exit code 56", err)
		}
		c.rec.waitFor(t, "the executor removed with the reason", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.ExecutorRemoved) bool { return e.Reason == ee.Reason }) == 1
		})
	})
}
