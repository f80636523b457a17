package endpoints_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// RunExecutor whose ctx ends just before its Executor endpoint has
// started returns nil, as documented for a cancelled ctx, and not an
// *ExitError with code 1 from the registration its stopping env refused.
// Before, it returned an *ExitError with code 1 (a failed executor).
func TestRunExecutorCancelledBeforeStartReturnsNil(t *testing.T) {
	nw := memNetwork()
	env := nw.driverEnv(t, testConf())
	defer env.Shutdown(context.Background()) //nolint:errcheck
	d, err := endpoints.NewDriver(env)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop(context.Background()) //nolint:errcheck
	for i := range 10 {
		ctx, cancel := context.WithCancel(context.Background())
		factory := func(name string, conf *actor.Conf) (*actor.Env, error) {
			if name == "sparkExecutor" {
				cancel() // after the config fetch, before the endpoint starts
			}
			return nw.factory(name, conf)
		}
		err := endpoints.RunExecutor(ctx, endpoints.ExecutorConfig{DriverURL: d.URL(), ExecutorID: fmt.Sprint(i), Cores: 1},
			endpoints.WithEnvFactory(factory))
		cancel()
		if err != nil {
			t.Fatalf("RunExecutor with its ctx cancelled = %v, want nil", err)
		}
	}
}
