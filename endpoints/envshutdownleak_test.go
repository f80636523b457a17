package endpoints_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/netty"
	"go.uber.org/goleak"
)

// A driver whose env is shut down without Driver.Stop (the driver
// endpoint's OnStop ends its jobs for that case) leaves nothing behind:
// drivers made and dropped this way, many times in one process, leave no
// goroutine (the listener bus's), and the scheduler's collector leaves the
// registry with the env, so that the next env and driver on it are metered.
// Before, each such driver left its listener bus's goroutine running, and
// its collector in the registry, where the next driver could not register.
func TestDriverEnvShutdownWithoutStopLeavesNothing(t *testing.T) {
	defer goleak.VerifyNone(t, append(leakOptions, goleak.IgnoreCurrent())...)
	reg := prometheus.NewRegistry()
	const cycles = 50
	for i := range cycles {
		env, err := netty.NewEnv("driver", actor.NewConf(), netty.WithPort(0), netty.WithEnvOptions(actor.WithMetricsRegistry(reg)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := endpoints.NewDriver(env, endpoints.WithListener(endpoints.ListenerFunc(func(endpoints.Event) {}))); err != nil {
			t.Fatal(err)
		}
		if err := env.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if strings.HasPrefix(mf.GetName(), "sparkrpc_scheduler_") {
				t.Fatalf("cycle %d: %s is still in the registry after the driver's env terminated", i, mf.GetName())
			}
		}
	}
}
