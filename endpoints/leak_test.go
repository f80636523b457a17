package endpoints_test

import (
	"context"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"go.uber.org/goleak"
)

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
