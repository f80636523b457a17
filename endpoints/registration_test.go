package endpoints_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
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
		testutil.Eventually(t, testTimeout, "a core taken", func() bool { ex, _ := executor(d, "7"); return ex.Ready && ex.FreeCores == 2 })
		if err := f.driver.Send(&messages.StatusUpdate{ExecutorId: "7", TaskId: lt.TaskId,
			State: messages.TaskState_TASK_STATE_FINISHED, Result: []byte("result-a"), TaskCpus: 1}); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.err != nil || len(r.res) != 1 || string(r.res[0]) != "result-a" {
			t.Fatalf("RunJob = %q, %v", r.res, r.err)
		}
		testutil.Eventually(t, testTimeout, "cores freed", func() bool { ex, _ := executor(d, "7"); return ex.FreeCores == 3 })
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
