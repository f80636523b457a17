package actor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sparkrpc/sparkrpc/actor"
)

// An env that shut down leaves nothing in a registry it was given: no
// series of an env that is gone (its endpoints gauge stuck at its last
// value), and the registry takes the next env of a program that makes one
// env after another, as the driver, resource and node managers free theirs
// on Stop. Before, the env stayed registered: its series for ever, and the
// next env on the registry failed with an AlreadyRegisteredError.
func TestShutdownEnvLeavesTheGivenRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	for i := range 3 {
		e, err := actor.NewEnv("seq", nil, actor.WithMetricsRegistry(reg))
		if err != nil {
			t.Fatalf("env %d on the registry after %d shut down: %v", i, i, err)
		}
		register(t, e, "echo", &testEndpoint{})
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		err = e.Shutdown(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if strings.HasPrefix(mf.GetName(), "sparkrpc_") {
				t.Fatalf("after env %d shut down, the registry still has %s", i, mf.GetName())
			}
		}
	}
}
