package endpoints_test

import (
	"context"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// One connection registers two executor ids. When that connection closes,
// every executor it registered is lost and its tasks run elsewhere. Before,
// the driver kept one id per address, so the disconnect removed only the
// last; the first stayed registered with its running task, neither finished
// nor resubmitted until the heartbeat timeout (120 s by default).
func TestDisconnectRemovesEveryExecutorOfTheConnection(t *testing.T) {
	nw := memNetwork()
	env := nw.driverEnv(t, testConf())
	t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
	rec := newRecorder()
	d, err := endpoints.NewDriver(env, endpoints.WithListener(rec))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	b := newFakeExecutor(t, nw, d.URL())
	if err := b.register("b1", "h", 1); err != nil {
		t.Fatal(err)
	}
	if err := b.driver.Send(&messages.LaunchedExecutor{ExecutorId: "b1"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	go func() { _, _ = d.RunJob(ctx, endpoints.EchoTaskName, [][]byte{[]byte("x")}) }()
	b.nextLaunch(t) // the task runs on b1
	if err := b.register("b2", "h", 1); err != nil {
		t.Logf("second id from the same connection refused: %v", err)
	}
	// b's connection closes.
	if err := b.env.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "an ExecutorRemoved", func(evs []endpoints.Event) bool {
		return countEvents[endpoints.ExecutorRemoved](evs, nil) > 0
	})
	// The disconnect's handler has ended once a later ask is answered.
	if _, err := d.Ref().AskSync(ctx, &messages.RetrieveSparkAppConfig{}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"b1", "b2"} {
		if ex, ok := executor(d, id); ok {
			t.Errorf("executor %s is still registered after its connection closed (free cores %d of %d: its task is neither done nor resubmitted)",
				id, ex.FreeCores, ex.TotalCores)
		}
	}
}
