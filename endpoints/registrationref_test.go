package endpoints_test

import (
	"context"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// The reference an executor registers with is a field of its frame: the
// driver sends only to an endpoint on the registering executor's own env.
// Here b registers a new id, "evil", with a's reference, then removes
// "evil" (its own). Before, the driver's StopExecutor for "evil", and any
// LaunchTask for it, went to a.
func TestRegisterWithAnotherExecutorsRefDoesNotRouteToIt(t *testing.T) {
	// The in-memory network delivers a send into the target's mailbox
	// before Send returns, so a's marker (received) comes after whatever
	// the driver sent a while handling b's ask. (Over TCP it fails the
	// same way, but the marker could overtake the StopExecutor.)
	nw := memNetwork()
	env := nw.driverEnv(t, testConf())
	t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
	d, err := endpoints.NewDriver(env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	a := newVictimExecutor(t, nw, d.URL(), "a")
	b := newFakeExecutor(t, nw, d.URL())
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := actor.AskAs[*messages.BoolReply](ctx, b.driver, &messages.RegisterExecutor{
		ExecutorId: "evil", ExecutorRef: a.ref.Proto(), Hostname: "h", Cores: 1}); err != nil {
		return // refused: nothing routes to a
	}
	if ex, _ := executor(d, "evil"); ex.Identity != "" {
		t.Logf("evil registered with identity %q (a's env is %q)", ex.Identity, a.env.Identity())
	}
	if _, err := b.driver.AskSync(ctx, &messages.RemoveExecutor{ExecutorId: "evil", Reason: "leaving"}); err != nil {
		t.Fatal(err)
	}
	if hasType[*messages.StopExecutor](a.received(t)) {
		t.Fatal("executor b registered \"evil\" with executor a's reference: removing \"evil\" sent StopExecutor to a")
	}
}

// The same with the driver's own CoarseGrainedScheduler as the reference.
// Before, the driver sent "executor" loop's LaunchTasks to itself, and once
// the job was cancelled, the KillTask for its task reached the driver's
// killTask handler, which forwarded it to loop's reference, itself, for
// ever.
func TestRegisterWithTheDriversOwnRefIsRefused(t *testing.T) {
	nw := memNetwork()
	env := nw.driverEnv(t, testConf(endpoints.KeyReviveInterval, "1h"))
	t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
	rec := newRecorder()
	d, err := endpoints.NewDriver(env, endpoints.WithListener(rec))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	b := newFakeExecutor(t, nw, d.URL())
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := actor.AskAs[*messages.BoolReply](ctx, b.driver, &messages.RegisterExecutor{
		ExecutorId: "loop", ExecutorRef: b.driver.Proto(), Hostname: "h", Cores: 1}); err != nil {
		return // refused
	}
	if err := b.driver.Send(&messages.LaunchedExecutor{ExecutorId: "loop"}); err != nil {
		t.Fatal(err)
	}
	jobCtx, cancelJob := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := d.RunJob(jobCtx, endpoints.EchoTaskName, [][]byte{[]byte("x")}); done <- err }()
	rec.waitFor(t, "the task launched on loop", func(evs []endpoints.Event) bool {
		return countEvents(evs, func(e endpoints.TaskStart) bool { return e.ExecutorID == "loop" }) == 1
	})
	cancelJob()
	<-done
	received := func() int64 {
		for _, s := range env.EndpointStats() {
			if s.Name == endpoints.DriverEndpointName {
				return int64(s.Received)
			}
		}
		return 0
	}
	const n = 1000
	before := received()
	for range n {
		if _, err := d.Ref().AskSync(ctx, &messages.RetrieveSparkAppConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	extra := received() - before - n
	t.Fatalf("the driver accepted its own endpoint as executor loop's reference; "+
		"during %d asks of the test its endpoint received %d other messages (a KillTask sending itself to itself)", n, extra)
}
