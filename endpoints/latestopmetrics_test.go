package endpoints_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/netty"
)

// A driver whose env was shut down without Stop gives its scheduler
// metrics up at once, so that the next driver on the same registry is
// metered; the Stop that comes later (a deferred one, run after the env's
// Shutdown) must not then take the next driver's metrics out of the
// registry: Prometheus unregisters by descriptors, and the two drivers'
// are the same. Before, it did: the metrics were unregistered by the
// release at the env's shutdown and again by Stop.
func TestLateStopLeavesTheNextDriversMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	newEnv := func() *actor.Env {
		env, err := netty.NewEnv("driver", actor.NewConf(), netty.WithPort(0), netty.WithEnvOptions(actor.WithMetricsRegistry(reg)))
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	scheduler := func() int {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, mf := range mfs {
			if strings.HasPrefix(mf.GetName(), "sparkrpc_scheduler_") {
				n++
			}
		}
		return n
	}
	env1 := newEnv()
	d1, err := endpoints.NewDriver(env1)
	if err != nil {
		t.Fatal(err)
	}
	if err := env1.Shutdown(context.Background()); err != nil { // before d1.Stop
		t.Fatal(err)
	}
	env2 := newEnv()
	defer env2.Shutdown(context.Background())
	d2, err := endpoints.NewDriver(env2)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Stop(context.Background())
	before := scheduler()
	if before == 0 {
		t.Fatal("the second driver is not metered")
	}
	_ = d1.Stop(context.Background()) // the first driver's late Stop
	if after := scheduler(); after != before {
		t.Errorf("the first driver's late Stop took the second driver's scheduler metrics out of the registry: %d families, then %d", before, after)
	}
}
