package endpoints_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// Driver.Stop given a context that has already ended (a program's
// signal context, say) still stops the executors and the driver's
// endpoints; it reports the context's error for what it could not wait
// for. Otherwise the executors are never told to stop, and a new driver
// cannot be made on the env: Stop cannot be called again.
// Before, neither stop was sent: the executors ran on and the env kept the
// driver's name.
func TestDriverStopWithEndedContextStillStops(t *testing.T) {
	nw := memNetwork()
	env := nw.driverEnv(t, testConf())
	defer env.Shutdown(context.Background()) //nolint:errcheck
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := endpoints.StartLocalCluster(ctx, env, endpoints.LocalClusterConfig{Executors: 1, NewEnv: nw.factory})
	if err != nil {
		t.Fatal(err)
	}
	ended, end := context.WithCancel(context.Background())
	end()
	if err := c.Driver.Stop(ended); !errors.Is(err, context.Canceled) {
		t.Errorf("Stop(ended ctx) = %v, want context.Canceled reported", err)
	}
	err = c.Stop(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the executors were never stopped: %v", err)
	}
	if errs := c.ExecutorErrors(); len(errs) != 1 || errs["1"] != nil {
		t.Errorf("executors returned %v, want executor 1 stopped cleanly", errs)
	}
	d2, err := endpoints.NewDriver(env)
	if err != nil {
		t.Fatalf("a new driver on the env: %v", err)
	}
	if err := d2.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}
