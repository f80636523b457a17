package endpoints_test

import (
	"context"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"go.uber.org/goleak"
)

// leakOptions lists the goroutines that may outlive an env's Shutdown:
// protoactor's dead-letter throttle, which waits out its 1s period on a
// ticker and ends by itself (see the actor package's TestMain). Nothing
// else is ignored.
var leakOptions = []goleak.Option{
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewThrottle.func1.1"),
}

// TestMain fails the package when a goroutine is still running after every
// test, example and benchmark has stopped its drivers and executors and shut
// their envs down.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakOptions...)
}

// A driver, its executors and their envs leave no goroutine behind once
// stopped and shut down.
func TestNoGoroutineLeaks(t *testing.T) {
	for _, mk := range []func() network{memNetwork, tcpNetwork} {
		t.Run(mk().name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			nw := mk()
			env := nw.driverEnv(t, testConf())
			c := startClusterNoCleanup(t, nw, env)
			// Run a job so that task runners and heartbeaters exist.
			if _, err := runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{[]byte("a"), []byte("b")}); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := c.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			if err := env.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
