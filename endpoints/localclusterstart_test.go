package endpoints_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// StartLocalCluster returns as soon as an executor has returned without
// becoming ready (here: refused by the driver), with that executor's
// error, rather than waiting for ctx to end: with context.Background, as
// the package's Example calls it, it would wait forever.
// Before, it waited for ctx, for ever with context.Background.
func TestStartLocalClusterReturnsWhenAnExecutorExits(t *testing.T) {
	nw := memNetwork()
	env := nw.driverEnv(t, testConf())
	defer env.Shutdown(context.Background()) //nolint:errcheck
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	_, err := endpoints.StartLocalCluster(ctx, env, endpoints.LocalClusterConfig{
		Executors: 1, NewEnv: nw.factory,
		DriverOptions: []endpoints.DriverOption{endpoints.WithExcludedHosts([]string{"localhost"})}})
	if err == nil {
		t.Fatal("StartLocalCluster succeeded with every executor refused")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("StartLocalCluster waited for its ctx although its executor had exited: %v", err)
	}
	var exit *endpoints.ExitError
	if !errors.As(err, &exit) || exit.Code != 1 {
		t.Fatalf("StartLocalCluster = %v, want the executor's *ExitError", err)
	}
}
