package endpoints_test

import (
	"context"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// KillExecutorsOnHost kills a host's executors as one: the tasks of the
// first removed are not offered to another of that host, which is killed
// next (Spark marks them all pending removal before it kills any). Before,
// each removal offered its tasks to the host's executors still registered:
// a task was launched on an executor being killed, and lost again.
func TestKillExecutorsOnHostLaunchesNothingOnTheHost(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(), 1, 2)
	key, gate := gates.New(t)
	done := make(chan error, 1)
	go func() {
		_, err := runJob(t, c.Driver, "test.gated", gatedPayloads(key, 2))
		done <- err
	}()
	testutil.Recv(t, gate.Arrived(2), testTimeout, "both tasks running on executor 0")
	ectx, ecancel := context.WithCancel(context.Background())
	defer ecancel()
	// A second executor of the host, idle; its id sorts after 0's.
	c.StartExecutor(ectx, endpoints.ExecutorConfig{DriverURL: c.Driver.URL(), ExecutorID: "z", Cores: 2},
		endpoints.WithEnvFactory(c.envs.factory))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.Driver.WaitForExecutors(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := c.Driver.KillExecutorsOnHost("localhost"); err != nil {
		t.Fatal(err)
	}
	if err := c.Driver.WaitForExecutorsGone(ctx, "0", "z"); err != nil {
		t.Fatal(err)
	}
	// The job ends on an executor of another host.
	c.StartExecutor(ectx, endpoints.ExecutorConfig{DriverURL: c.Driver.URL(), ExecutorID: "other", Hostname: "otherhost", Cores: 2},
		endpoints.WithEnvFactory(c.envs.factory))
	gate.Open()
	if err := testutil.Recv(t, done, testTimeout, "the job's end"); err != nil {
		t.Fatal(err)
	}
	evs, _ := c.rec.snapshot()
	if n := countEvents(evs, func(e endpoints.TaskStart) bool { return e.ExecutorID == "z" }); n != 0 {
		t.Fatalf("%d tasks launched on executor z, whose host was being killed", n)
	}
}
