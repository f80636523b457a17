package endpoints_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

func TestExecutorLostMidJobTasksRunElsewhere(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 3, 2)
		key, gate := gates.New(t)
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
		gate.Open()
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
	testutil.Recv(t, a.stops, testTimeout, "the removed executor's StopExecutor")
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
	testutil.Eventually(t, testTimeout, "b's core freed once", func() bool { ex, _ := executor(d, "b"); return ex.FreeCores == 1 })
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

type allocator struct{ lost chan string }

func (a allocator) ExecutorLost(id, reason string) { a.lost <- id + ": " + reason }

func TestAllocatorIsToldOfLostExecutors(t *testing.T) {
	a := allocator{lost: make(chan string, 4)}
	c := startCluster(t, memNetwork(), testConf(), 2, 1, endpoints.WithExecutorAllocator(a))
	if err := c.Driver.KillExecutor("2"); err != nil {
		t.Fatal(err)
	}
	if got := testutil.Recv(t, a.lost, testTimeout, "the allocator's ExecutorLost"); got != "2: "+endpoints.ReasonKilled {
		t.Fatalf("ExecutorLost(%s)", got)
	}
	testutil.Eventually(t, testTimeout, "executor 2 returned", func() bool { _, ok := c.ExecutorErrors()["2"]; return ok })
	if err := c.ExecutorErrors()["2"]; err != nil {
		t.Fatalf("killed executor returned %v; want a clean stop", err)
	}
}

// An executor that disconnects after the driver told it to shut down is
// not lost: the driver removes it with an info record, no "Lost executor"
// warning, and does not count it in executors_lost_total. (A successful
// application used to end with such a warning when an executor's
// disconnect reached the driver before the driver's own stop.)
func TestExecutorsStoppedByTheDriverAreNotLost(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		lines := make(lineWriter, 1024)
		c := startCluster(t, nw, testConf(), 1, 1, endpoints.WithLogger(zerolog.New(lines)))
		f := newFakeExecutor(t, nw, c.Driver.URL())
		if err := f.register("fake", "h", 1); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if _, err := c.Driver.Ref().AskSync(ctx, &messages.StopExecutors{}); err != nil {
			t.Fatal(err)
		}
		testutil.Recv(t, f.stops, testTimeout, "a StopExecutor")
		if err := f.env.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		c.rec.waitFor(t, "the fake executor's removal", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.ExecutorRemoved) bool { return e.ExecutorID == "fake" }) == 1
		})
		// The driver logs the removal after it posts the event, in the same
		// turn of its loop: once a later ask is answered, it has logged.
		if _, err := c.Driver.Ref().AskSync(ctx, &messages.RetrieveSparkAppConfig{}); err != nil {
			t.Fatal(err)
		}
		var infos int
		for len(lines) > 0 {
			l := <-lines
			if strings.Contains(l, `"level":"warn"`) || strings.Contains(l, `"level":"error"`) {
				t.Errorf("logged %s", l)
			}
			if strings.Contains(l, `"executor":"fake"`) && strings.Contains(l, "Executor shut down as the driver asked") {
				infos++
			}
		}
		if infos != 1 {
			t.Errorf("logged %d info records of the fake executor's shutdown; want 1", infos)
		}
		m := testutil.Scrape(t, c.Driver.MetricsHandler())
		if got := m.Get(t, "sparkrpc_scheduler_executors_lost_total", "reason", endpoints.LossDisassociated); got != 0 {
			t.Errorf("executors_lost_total{reason=disassociated} = %v; want 0", got)
		}
	})
}
