package endpoints_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// Spark's CoarseGrainedExecutorBackend.onDisconnected compares the
// disconnected address with driver.address, the address the executor
// reached the driver at (the socket's host string). An executor given
// the driver's URL with another name of its host (localhost for a driver
// advertising 127.0.0.1) must still exit when its driver goes away.
// Before, network events reported the address the driver advertised, the
// executor took the disconnect for an unknown driver's, and ran on until
// its heartbeats had failed 60 times.
func TestExecutorExitsWhenDriverReachedByAnotherHostNameGoesAway(t *testing.T) {
	nw := tcpNetwork()
	c := startCluster(t, nw, testConf(), 0, 1)
	port := c.env.Address().Port
	url := "spark://" + endpoints.DriverEndpointName + "@localhost:" + strconv.Itoa(port)
	ectx, ecancel := context.WithCancel(context.Background())
	defer ecancel()
	c.StartExecutor(ectx, endpoints.ExecutorConfig{DriverURL: url, ExecutorID: "l", Cores: 1},
		endpoints.WithEnvFactory(nw.factory))
	wctx, wcancel := context.WithTimeout(context.Background(), testTimeout)
	defer wcancel()
	if err := c.Driver.WaitForExecutors(wctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.env.Shutdown(wctx); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the executor returned", func() bool { return len(c.ExecutorErrors()) == 1 })
	err := c.ExecutorErrors()["l"]
	var ee *endpoints.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || !strings.HasSuffix(ee.Reason, " disassociated! Shutting down.") {
		t.Fatalf("executor: %v; want exit code 1, driver disassociated", err)
	}
}
