package endpoints_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// An executor whose RegisterExecutor reaches the driver while it stops,
// after StopExecutors and before StopDriver, is refused or told to stop:
// Stop promises to stop the application's executors. Before, register did
// not look at d.stopped, so the executor was registered (and told so),
// then never sent StopExecutor, and the driver still listed it after Stop.
//
// The release hook of the driver's lock places the registration: the
// first release after Stop begins is Stop's own, the second the one of
// the StopExecutors handler, on the driver's loop; the in-memory network
// puts the ask in the driver's mailbox before the hook returns, so it is
// handled after StopExecutors and before StopDriver (sent only once
// StopExecutors is answered).
func TestRegistrationDuringStopIsRefusedOrStopped(t *testing.T) {
	nw := memNetwork()
	env := nw.driverEnv(t, testConf(endpoints.KeyReviveInterval, "1h"))
	t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
	var armed atomic.Bool
	var releases atomic.Int32
	var late *victimExecutor
	fut := make(chan *actor.Future, 1)
	hook := func() {
		if armed.Load() && releases.Add(1) == 2 {
			fut <- late.driver.Ask(context.Background(), &messages.RegisterExecutor{
				ExecutorId: "late", ExecutorRef: late.ref.Proto(), Hostname: "h", Cores: 1})
		}
	}
	d, err := endpoints.NewDriver(env, endpoints.WithLockRelease(hook))
	if err != nil {
		t.Fatal(err)
	}
	late = connectVictim(t, nw, d.URL())
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	armed.Store(true)
	if err := d.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	var f *actor.Future
	select {
	case f = <-fut:
	default:
		t.Fatal("the hook did not place the registration")
	}
	if _, err := f.Result(); err != nil {
		return // refused
	}
	if !hasType[*messages.StopExecutor](late.received(t)) {
		_, listed := executor(d, "late")
		t.Fatalf("executor \"late\" registered during Stop (accepted, listed after Stop: %v) and was never sent StopExecutor", listed)
	}
}
