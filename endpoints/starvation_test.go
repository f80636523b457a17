package endpoints_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A job that launches no task, for want of executors, says so in the
// driver's log every spark.starvation.timeout, as Spark's "Initial job has
// not accepted any resources". Before, it waited without a word (submit
// --num-executors 0 on local-cluster, say).
func TestAJobWithoutResourcesSaysSo(t *testing.T) {
	nw := memNetwork()
	env := nw.driverEnv(t, testConf(endpoints.KeyStarvationTimeout, "20ms"))
	t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
	lines := make(lineWriter, 64)
	d, err := endpoints.NewDriver(env, endpoints.WithLogger(zerolog.New(lines)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := d.RunJob(ctx, endpoints.EchoTaskName, [][]byte{[]byte("x")})
		done <- err
	}()
	for warned := 0; warned < 2; {
		if l := testutil.Recv(t, lines, testTimeout, "a log line"); strings.Contains(l, "Initial job has not accepted any resources") {
			warned++
		}
	}
	cancel()
	if err := testutil.Recv(t, done, testTimeout, "RunJob to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("RunJob: %v, want context.Canceled", err)
	}
}
