package endpoints_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"go.uber.org/goleak"
)

// fakeClusterManager records what the driver asks of it.
type fakeClusterManager struct {
	requests chan int
	kills    chan []string
	replaces chan []string // KillAndReplaceExecutors calls
	asked    chan string   // executor ids whose loss reason was asked

	mu         sync.Mutex
	err        error         // returned by every call
	reason     string        // the loss reason it gives
	holdReason chan struct{} // when set, ExecutorLossReason waits for it
}

func newFakeClusterManager() *fakeClusterManager {
	return &fakeClusterManager{requests: make(chan int, 16), kills: make(chan []string, 16), replaces: make(chan []string, 16),
		asked: make(chan string, 16)}
}

func (f *fakeClusterManager) state() (string, chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reason, f.holdReason, f.err
}

func (f *fakeClusterManager) RequestTotalExecutors(_ context.Context, total int) error {
	f.requests <- total
	_, _, err := f.state()
	return err
}

func (f *fakeClusterManager) KillExecutors(_ context.Context, ids []string) error {
	f.kills <- slices.Clone(ids)
	_, _, err := f.state()
	return err
}

func (f *fakeClusterManager) KillAndReplaceExecutors(_ context.Context, ids []string) error {
	f.replaces <- slices.Clone(ids)
	_, _, err := f.state()
	return err
}

func (f *fakeClusterManager) ExecutorLossReason(ctx context.Context, id string) (string, error) {
	f.asked <- id
	reason, hold, err := f.state()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
	}
	return reason, err
}

// lossRecorder is a cluster manager that is also an ExecutorAllocator.
type lossRecorder struct {
	*fakeClusterManager
	lost chan string
}

func (l lossRecorder) ExecutorLost(id, reason string) { l.lost <- id + ": " + reason }

func TestRequestTotalExecutorsGoesToTheClusterManager(t *testing.T) {
	cm := newFakeClusterManager()
	c := startCluster(t, memNetwork(), testConf(), 0, 1, endpoints.WithClusterManager(cm))
	if c.Driver.ClusterManager() != cm {
		t.Fatal("ClusterManager() is not the one set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.Driver.RequestTotalExecutors(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if got := testutil.Recv(t, cm.requests, testTimeout, "a request"); got != 5 {
		t.Fatalf("cluster manager asked for %d executors, want 5", got)
	}
	refused := errors.New("queue is full")
	cm.mu.Lock()
	cm.err = refused
	cm.mu.Unlock()
	if err := c.Driver.RequestTotalExecutors(ctx, 7); !errors.Is(err, refused) || !strings.Contains(err.Error(), "7 executors") {
		t.Fatalf("RequestTotalExecutors = %v; want the cluster manager's error", err)
	}
	if got := testutil.Recv(t, cm.requests, testTimeout, "a request"); got != 7 {
		t.Fatalf("cluster manager asked for %d executors, want 7", got)
	}
	if err := c.Driver.RequestTotalExecutors(ctx, -1); !errors.Is(err, endpoints.ErrInvalidConfig) {
		t.Fatalf("RequestTotalExecutors(-1) = %v", err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Driver.RequestTotalExecutors(ctx, 1); !errors.Is(err, endpoints.ErrDriverStopped) {
		t.Fatalf("RequestTotalExecutors after Stop = %v", err)
	}
	select {
	case n := <-cm.requests:
		t.Fatalf("cluster manager asked for %d executors by an invalid or late request", n)
	default:
	}
}

func TestRequestTotalExecutorsWithoutClusterManager(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(), 0, 1)
	if err := c.Driver.RequestTotalExecutors(context.Background(), 2); !errors.Is(err, endpoints.ErrNoClusterManager) {
		t.Fatalf("RequestTotalExecutors = %v; want ErrNoClusterManager", err)
	}
}

// KillExecutors removes the executors from the driver (reason "Executor
// killed by driver."), so that they stop, then asks the cluster manager to
// release them; a cluster manager that is also an allocator hears of the
// losses.
func TestKillExecutorsRemovesThemAndAsksTheClusterManager(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		cm := lossRecorder{fakeClusterManager: newFakeClusterManager(), lost: make(chan string, 16)}
		c := startCluster(t, nw, testConf(), 3, 1, endpoints.WithClusterManager(cm))
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		killed, err := c.Driver.KillExecutors(ctx, []string{"3", "nope", "2", "3"})
		if err != nil || !slices.Equal(killed, []string{"3", "2"}) {
			t.Fatalf("KillExecutors = %v, %v; want [3 2]", killed, err)
		}
		// Removed by the time KillExecutors returns.
		if exs := c.Driver.Executors(); len(exs) != 1 || exs[0].ID != "1" || c.Driver.TotalCores() != 1 {
			t.Fatalf("executors after the kill: %+v", exs)
		}
		if got := testutil.Recv(t, cm.kills, testTimeout, "a kill"); !slices.Equal(got, []string{"3", "2"}) {
			t.Fatalf("cluster manager told to kill %v", got)
		}
		evs := c.rec.waitFor(t, "two ExecutorRemoved", func(evs []endpoints.Event) bool {
			return countEvents[endpoints.ExecutorRemoved](evs, nil) == 2
		})
		for _, ev := range evs {
			if e, ok := ev.(endpoints.ExecutorRemoved); ok && (e.Reason != endpoints.ReasonKilled || e.ExecutorID == "1") {
				t.Fatalf("removed %s: %q", e.ExecutorID, e.Reason)
			}
		}
		if !strings.Contains(endpoints.ReasonKilled, "killed by driver") {
			t.Fatalf("ReasonKilled = %q", endpoints.ReasonKilled)
		}
		lost := []string{testutil.Recv(t, cm.lost, testTimeout, "ExecutorLost"), testutil.Recv(t, cm.lost, testTimeout, "ExecutorLost")}
		slices.Sort(lost)
		if want := []string{"2: " + endpoints.ReasonKilled, "3: " + endpoints.ReasonKilled}; !slices.Equal(lost, want) {
			t.Fatalf("ExecutorLost calls = %q, want %q", lost, want)
		}
		testutil.Eventually(t, testTimeout, "the killed executors returned", func() bool { return len(c.ExecutorErrors()) == 2 })
		for id, err := range c.ExecutorErrors() {
			if err != nil {
				t.Errorf("killed executor %s returned %v; want a clean stop", id, err)
			}
		}
		// Jobs still run on the executor left.
		if res, err := runJob(t, c.Driver, "test.executor", make([][]byte, 3)); err != nil ||
			string(res[0]) != "1" || string(res[2]) != "1" {
			t.Fatalf("job after the kill = %q, %v", res, err)
		}
		// The cluster manager's error is returned; the executor is removed
		// all the same.
		refused := errors.New("no such container")
		cm.mu.Lock()
		cm.err = refused
		cm.mu.Unlock()
		if killed, err := c.Driver.KillExecutors(ctx, []string{"1"}); !errors.Is(err, refused) || !slices.Equal(killed, []string{"1"}) {
			t.Fatalf("KillExecutors = %v, %v; want [1] and the cluster manager's error", killed, err)
		}
		if len(c.Driver.Executors()) != 0 {
			t.Fatalf("executors = %+v", c.Driver.Executors())
		}
		// Nothing known to kill: the cluster manager is not asked.
		if killed, err := c.Driver.KillExecutors(ctx, []string{"1"}); err != nil || len(killed) != 0 {
			t.Fatalf("KillExecutors of a removed executor = %v, %v", killed, err)
		}
		if len(cm.kills) != 1 {
			t.Fatalf("cluster manager asked %d more times; want once", len(cm.kills))
		}
	})
}

func TestKillExecutorsWithoutClusterManagerRemovesThem(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(), 2, 1)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if killed, err := c.Driver.KillExecutors(ctx, []string{"1"}); err != nil || !slices.Equal(killed, []string{"1"}) {
		t.Fatalf("KillExecutors = %v, %v", killed, err)
	}
	if exs := c.Driver.Executors(); len(exs) != 1 || exs[0].ID != "2" {
		t.Fatalf("executors = %+v", exs)
	}
	testutil.Eventually(t, testTimeout, "executor 1 returned", func() bool { _, ok := c.ExecutorErrors()["1"]; return ok })
	if err := c.ExecutorErrors()["1"]; err != nil {
		t.Fatalf("killed executor returned %v", err)
	}
}

// With a cluster manager, an executor whose connection closes gets no more
// tasks and its tasks run elsewhere at once; it is removed with the loss
// reason the cluster manager gives.
func TestLossReasonComesFromTheClusterManager(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		cm := newFakeClusterManager()
		const why = "Container killed on request. Exit code is 137"
		hold := make(chan struct{})
		cm.reason, cm.holdReason = why, hold
		c := startCluster(t, nw, testConf(), 1, 1, endpoints.WithClusterManager(cm))
		// The executor that goes away is a hand-made one with 2 cores: it
		// takes one task of the job and keeps a free core, which must not
		// be offered while its loss reason is pending.
		f := newFakeExecutor(t, nw, c.Driver.URL())
		if err := f.register("f", "h", 2); err != nil {
			t.Fatal(err)
		}
		if err := f.driver.Send(&messages.LaunchedExecutor{ExecutorId: "f"}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := c.Driver.WaitForExecutors(ctx, 2); err != nil {
			t.Fatal(err)
		}
		key, gate := gates.New(t)
		type result struct {
			res [][]byte
			err error
		}
		done := make(chan result, 1)
		payloads := gatedPayloads(key, 2)
		go func() {
			res, err := runJob(t, c.Driver, "test.gated", payloads)
			done <- result{res, err}
		}()
		lt := f.nextLaunch(t)
		c.rec.waitFor(t, "both tasks running", func(evs []endpoints.Event) bool {
			return countEvents[endpoints.TaskStart](evs, nil) == 2
		})
		if err := f.env.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if id := testutil.Recv(t, cm.asked, testTimeout, "the loss reason asked"); id != "f" {
			t.Fatalf("loss reason asked for %q, want f", id)
		}
		// While the reason is pending, the executor is still known, its
		// task has been taken back, and it does not count as ready (checked
		// without waiting, with a context that has already ended).
		c.rec.waitFor(t, "the lost executor's task taken back", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.TaskEnd) bool {
				return e.ExecutorID == "f" && e.TaskID == lt.TaskId && e.State == messages.TaskState_TASK_STATE_LOST &&
					e.Error == endpoints.ReasonPendingLoss
			}) == 1
		})
		if _, ok := executor(c.Driver, "f"); !ok {
			t.Fatal("the executor was removed before its loss reason came")
		}
		ended, endCancel := context.WithCancel(context.Background())
		endCancel()
		if err := c.Driver.WaitForExecutors(ended, 2); err == nil {
			t.Fatal("an executor waiting for its loss reason counts as ready")
		}
		close(hold)
		evs := c.rec.waitFor(t, "the executor removed", func(evs []endpoints.Event) bool {
			return countEvents[endpoints.ExecutorRemoved](evs, nil) == 1
		})
		for _, ev := range evs {
			if e, ok := ev.(endpoints.ExecutorRemoved); ok && (e.ExecutorID != "f" || e.Reason != why) {
				t.Fatalf("ExecutorRemoved %+v; want executor f with the cluster manager's reason", e)
			}
		}
		if n := countEvents(evs, func(e endpoints.TaskStart) bool { return e.ExecutorID == "f" }); n != 1 {
			t.Fatalf("%d tasks started on the lost executor; want only the first one", n)
		}
		gate.Open()
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		for i := range payloads {
			if string(r.res[i]) != string(payloads[i]) {
				t.Fatalf("result %d = %q", i, r.res[i])
			}
		}
		evs = c.rec.waitFor(t, "JobEnd", func(evs []endpoints.Event) bool { return countEvents[endpoints.JobEnd](evs, nil) == 1 })
		finished := map[int]int{}
		for _, ev := range evs {
			if e, ok := ev.(endpoints.TaskEnd); ok && e.State == messages.TaskState_TASK_STATE_FINISHED {
				finished[e.Partition]++
				if e.ExecutorID != "1" {
					t.Errorf("partition %d finished on executor %s", e.Partition, e.ExecutorID)
				}
			}
		}
		for p := range payloads {
			if finished[p] != 1 {
				t.Errorf("partition %d finished %d times", p, finished[p])
			}
		}
	})
}

// A cluster manager that cannot say why leaves the usual reason.
func TestLossReasonFallsBackWhenTheClusterManagerFails(t *testing.T) {
	cm := newFakeClusterManager()
	cm.err = errors.New("unknown container")
	c := startCluster(t, memNetwork(), testConf(), 2, 1, endpoints.WithClusterManager(cm))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.envs.env("1").Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	evs := c.rec.waitFor(t, "executor 1 removed", func(evs []endpoints.Event) bool {
		return countEvents[endpoints.ExecutorRemoved](evs, nil) == 1
	})
	for _, ev := range evs {
		if e, ok := ev.(endpoints.ExecutorRemoved); ok && (e.ExecutorID != "1" || e.Reason != endpoints.ReasonDisassociated) {
			t.Fatalf("ExecutorRemoved %+v; want executor 1, disassociated", e)
		}
	}
	if id := testutil.Recv(t, cm.asked, testTimeout, "the loss reason asked"); id != "1" {
		t.Fatalf("loss reason asked for %q", id)
	}
}

// Stopping the driver ends the loss-reason asks still waiting for the
// cluster manager, and leaves no goroutine behind.
func TestStopEndsPendingLossReasonAsks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	nw := memNetwork()
	env := nw.driverEnv(t, testConf())
	cm := newFakeClusterManager()
	cm.holdReason = make(chan struct{}) // never answers
	d, err := endpoints.NewDriver(env, endpoints.WithClusterManager(cm))
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeExecutor(t, nw, d.URL())
	if err := f.register("f", "h", 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := f.env.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	testutil.Recv(t, cm.asked, testTimeout, "the loss reason asked")
	if err := d.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := env.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// An executor silent for longer than spark.network.timeout is removed (its
// tasks run elsewhere) and the cluster manager is asked to kill it and
// replace it (Spark's HeartbeatReceiver.expireDeadHosts and
// killAndReplaceExecutor); the executors that heartbeat are left alone.
func TestHeartbeatExpiryKillsAndReplacesTheExecutor(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		cm := newFakeClusterManager()
		conf := testConf(endpoints.KeyHeartbeatInterval, "50ms", actor.KeyNetworkTimeout, "600ms",
			endpoints.KeyTimeoutInterval, "50ms")
		c := startCluster(t, nw, conf, 1, 1, endpoints.WithClusterManager(cm))
		// A hung executor: registered and ready, running a task, but it never
		// heartbeats nor answers.
		hung := newFakeExecutor(t, nw, c.Driver.URL())
		if err := hung.register("hung", "h", 1); err != nil {
			t.Fatal(err)
		}
		if err := hung.driver.Send(&messages.LaunchedExecutor{ExecutorId: "hung"}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := c.Driver.WaitForExecutors(ctx, 2); err != nil {
			t.Fatal(err)
		}
		key, gate := gates.New(t)
		type result struct {
			res [][]byte
			err error
		}
		done := make(chan result, 1)
		payloads := gatedPayloads(key, 2)
		go func() {
			res, err := runJob(t, c.Driver, "test.gated", payloads)
			done <- result{res, err}
		}()
		hung.nextLaunch(t) // one task is stuck on the hung executor
		if got := testutil.Recv(t, cm.replaces, testTimeout, "KillAndReplaceExecutors"); !slices.Equal(got, []string{"hung"}) {
			t.Fatalf("cluster manager told to kill and replace %v, want [hung]", got)
		}
		evs := c.rec.waitFor(t, "the hung executor removed", func(evs []endpoints.Event) bool {
			return countEvents[endpoints.ExecutorRemoved](evs, nil) == 1
		})
		for _, ev := range evs {
			if e, ok := ev.(endpoints.ExecutorRemoved); ok &&
				(e.ExecutorID != "hung" || !strings.HasPrefix(e.Reason, "Executor heartbeat timed out after ")) {
				t.Fatalf("ExecutorRemoved %+v; want the hung executor, timed out", e)
			}
		}
		gate.Open()
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		for i := range payloads {
			if string(r.res[i]) != string(payloads[i]) {
				t.Fatalf("result %d = %q", i, r.res[i])
			}
		}
		if len(cm.kills) != 0 || len(cm.requests) != 0 {
			t.Fatalf("the cluster manager was asked to kill without replacing, or for a new total")
		}
		if len(cm.replaces) != 0 {
			t.Fatalf("kill and replace asked again: %v", <-cm.replaces)
		}
		if _, ok := executor(c.Driver, "1"); !ok {
			t.Fatal("the executor that heartbeats was removed")
		}
	})
}

// An executor whose connection closed while its container keeps running
// (the cluster manager has no loss reason for it) is killed and replaced
// too: by the heartbeat expiry, before the loss-reason ask times out.
func TestDisconnectedExecutorWithoutLossReasonIsKilledAndReplaced(t *testing.T) {
	cm := newFakeClusterManager()
	cm.holdReason = make(chan struct{}) // the container runs on: no reason
	conf := testConf(endpoints.KeyHeartbeatInterval, "50ms", actor.KeyNetworkTimeout, "600ms",
		endpoints.KeyTimeoutInterval, "50ms")
	nw := memNetwork()
	c := startCluster(t, nw, conf, 1, 1, endpoints.WithClusterManager(cm))
	gone := newFakeExecutor(t, nw, c.Driver.URL())
	if err := gone.register("gone", "h", 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := gone.env.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if id := testutil.Recv(t, cm.asked, testTimeout, "the loss reason asked"); id != "gone" {
		t.Fatalf("loss reason asked for %q", id)
	}
	if got := testutil.Recv(t, cm.replaces, testTimeout, "KillAndReplaceExecutors"); !slices.Equal(got, []string{"gone"}) {
		t.Fatalf("cluster manager told to kill and replace %v, want [gone]", got)
	}
	c.rec.waitFor(t, "the executor removed", func(evs []endpoints.Event) bool {
		return countEvents(evs, func(e endpoints.ExecutorRemoved) bool {
			return e.ExecutorID == "gone" && strings.HasPrefix(e.Reason, "Executor heartbeat timed out after ")
		}) == 1
	})
	close(cm.holdReason)
}

// When the loss-reason ask fails (the cluster manager cannot say why; its
// container may run on), the executor is killed and replaced.
func TestLossReasonFailureKillsAndReplaces(t *testing.T) {
	cm := newFakeClusterManager()
	cm.err = errors.New("no answer")
	c := startCluster(t, memNetwork(), testConf(), 2, 1, endpoints.WithClusterManager(cm))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.envs.env("2").Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testutil.Recv(t, cm.replaces, testTimeout, "KillAndReplaceExecutors"); !slices.Equal(got, []string{"2"}) {
		t.Fatalf("cluster manager told to kill and replace %v, want [2]", got)
	}
}

// A cluster manager that is also the allocator of WithExecutorAllocator
// hears of each lost executor once.
func TestAllocatorGivenTwiceIsToldOnce(t *testing.T) {
	cm := lossRecorder{fakeClusterManager: newFakeClusterManager(), lost: make(chan string, 16)}
	c := startCluster(t, memNetwork(), testConf(), 2, 1, endpoints.WithClusterManager(cm), endpoints.WithExecutorAllocator(cm))
	if err := c.Driver.KillExecutor("2"); err != nil {
		t.Fatal(err)
	}
	if got := testutil.Recv(t, cm.lost, testTimeout, "ExecutorLost"); got != "2: "+endpoints.ReasonKilled {
		t.Fatalf("ExecutorLost(%s)", got)
	}
	// The bus gives each event to every listener before the next one: once
	// the recorder has the job's end, the allocator has had every call for
	// the loss.
	if _, err := runJob(t, c.Driver, "test.executor", make([][]byte, 1)); err != nil {
		t.Fatal(err)
	}
	c.rec.waitFor(t, "the job's end", func(evs []endpoints.Event) bool {
		return countEvents[endpoints.JobEnd](evs, nil) == 1
	})
	if n := len(cm.lost); n != 0 {
		t.Fatalf("allocator told %d more times; want once", n)
	}
}
