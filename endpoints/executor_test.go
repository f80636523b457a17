package endpoints_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

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

func TestDriverGoingAwayMakesExecutorsExit(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 2, 1)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := c.env.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, testTimeout, "every executor returned", func() bool { return len(c.ExecutorErrors()) == 2 })
		for id, err := range c.ExecutorErrors() {
			var ee *endpoints.ExitError
			if !errors.As(err, &ee) || ee.Code != 1 || !strings.HasPrefix(ee.Reason, "Driver ") ||
				!strings.HasSuffix(ee.Reason, " disassociated! Shutting down.") {
				t.Errorf("executor %s: %v; want exit code 1, driver disassociated", id, err)
			}
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
		key, gate := gates.New(t)
		type result struct {
			res [][]byte
			err error
		}
		done := make(chan result, 1)
		go func() {
			res, err := runJob(t, c.Driver, "test.gated", gatedPayloads(key, 2))
			done <- result{res, err}
		}()
		// Running on the executor, not only launched by the driver: a
		// launch still on its way when the executor starts to leave is
		// refused, and this cluster has no other executor to run it.
		testutil.Recv(t, gate.Arrived(2), testTimeout, "both tasks running on the executor")
		ecancel()
		testutil.Eventually(t, testTimeout, "executor decommissioning", func() bool { ex, _ := executor(c.Driver, "g"); return ex.Decommissioning })
		if errs := c.ExecutorErrors(); len(errs) != 0 {
			t.Fatalf("executor returned before its tasks finished: %v", errs)
		}
		gate.Open()
		r := <-done
		if r.err != nil || len(r.res) != 2 {
			t.Fatalf("job = %q, %v; want the running tasks to finish", r.res, r.err)
		}
		testutil.Eventually(t, testTimeout, "executor returned", func() bool { return len(c.ExecutorErrors()) == 1 })
		if err := c.ExecutorErrors()["g"]; err != nil {
			t.Fatalf("RunExecutor = %v; want nil", err)
		}
		c.rec.waitFor(t, "executor removed", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.ExecutorRemoved) bool { return e.ExecutorID == "g" }) == 1
		})
	})
}

// Driver.DecommissionExecutor (a pod being deleted): the executor gets no
// new task, finishes its running ones, and leaves cleanly.
func TestDriverDecommissionsExecutor(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 0, 1)
		c.StartExecutor(context.Background(), endpoints.ExecutorConfig{DriverURL: c.Driver.URL(), ExecutorID: "d", Cores: 2},
			endpoints.WithEnvFactory(nw.factory))
		wctx, wcancel := context.WithTimeout(context.Background(), testTimeout)
		defer wcancel()
		if err := c.Driver.WaitForExecutors(wctx, 1); err != nil {
			t.Fatal(err)
		}
		key, gate := gates.New(t)
		done := make(chan error, 1)
		go func() {
			_, err := runJob(t, c.Driver, "test.gated", gatedPayloads(key, 2))
			done <- err
		}()
		// Running on the executor, not only launched by the driver: a
		// launch still on its way when the executor starts to leave is
		// refused, and this cluster has no other executor to run it.
		testutil.Recv(t, gate.Arrived(2), testTimeout, "both tasks running on the executor")
		if !c.Driver.DecommissionExecutor("d", "pod deleted") || c.Driver.DecommissionExecutor("nope", "x") {
			t.Fatal("DecommissionExecutor: want true for a known executor only")
		}
		if ex, _ := executor(c.Driver, "d"); !ex.Decommissioning {
			t.Fatalf("executor %+v is not decommissioning", ex)
		}
		if errs := c.ExecutorErrors(); len(errs) != 0 {
			t.Fatalf("executor returned before its tasks finished: %v", errs)
		}
		gate.Open()
		if err := <-done; err != nil {
			t.Fatalf("job: %v; want the running tasks to finish", err)
		}
		testutil.Eventually(t, testTimeout, "executor returned", func() bool { return len(c.ExecutorErrors()) == 1 })
		if err := c.ExecutorErrors()["d"]; err != nil {
			t.Fatalf("RunExecutor = %v; want nil", err)
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
	testutil.Eventually(t, testTimeout, "the executor returned", func() bool { return len(c.ExecutorErrors()) == 1 })
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
