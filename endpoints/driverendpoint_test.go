package endpoints_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// The scheduler endpoints answer an ask of a type they do not handle with
// Spark's "Unsupported message", and keep working after it: the driver
// endpoint, the heartbeat receiver and an executor's backend.
func TestEndpointsRefuseUnsupportedAsks(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 1, 1)
		execEnv := c.envs.env("1")
		if execEnv == nil {
			t.Fatal("no env for executor 1")
		}
		for _, tc := range []struct {
			name     string
			endpoint string
			local    bool // ask from the endpoint's own env (an executor does not listen)
			msg      proto.Message
		}{
			{"driver", endpoints.DriverEndpointName, false, &messages.Heartbeat{ExecutorId: "1"}},
			{"driver one-way only", endpoints.DriverEndpointName, false, &messages.StatusUpdate{}},
			{"heartbeat receiver", endpoints.HeartbeatEndpointName, false, &messages.RegisterExecutor{ExecutorId: "x"}},
			{"heartbeat receiver one-way only", endpoints.HeartbeatEndpointName, false, &messages.ExecutorRegistered{ExecutorId: "x"}},
			{"executor", endpoints.ExecutorEndpointName, true, &messages.LaunchTask{}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ref := c.env.RemoteRef(c.env.Address(), tc.endpoint)
				if tc.local {
					var ok bool
					if ref, ok = execEnv.Endpoint(tc.endpoint); !ok {
						t.Fatalf("no %s endpoint", tc.endpoint)
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
				defer cancel()
				_, err := ref.AskSync(ctx, tc.msg)
				if err == nil || !strings.Contains(err.Error(), "Unsupported message") {
					t.Fatalf("ask %T of %s = %v; want Unsupported message", tc.msg, tc.endpoint, err)
				}
			})
		}
		// Every endpoint still works: a job runs.
		if res, err := runJob(t, c.Driver, "test.executor", make([][]byte, 2)); err != nil || string(res[1]) != "1" {
			t.Fatalf("job after the unsupported asks = %q, %v", res, err)
		}
	})
}

// A refused registration fails the asker and is logged once, at warn level,
// by the driver: not a second time as an endpoint error.
func TestRefusedRegistrationIsLoggedOnce(t *testing.T) {
	nw := memNetwork()
	lines := make(lineWriter, 1024)
	c := startCluster(t, nw, testConf(), 1, 1, endpoints.WithLogger(zerolog.New(lines)))
	f := newFakeExecutor(t, nw, c.Driver.URL())
	if err := f.register("1", "h", 1); err == nil || !strings.Contains(err.Error(), "Duplicate executor ID: 1") {
		t.Fatalf("registering a duplicate = %v; want Duplicate executor ID: 1", err)
	}
	// The driver endpoint is serial: once this ask is answered, the
	// refusal's error has been handled.
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := f.driver.AskSync(ctx, &messages.RetrieveSparkAppConfig{}); err != nil {
		t.Fatal(err)
	}
	var warned, errs []string
	for len(lines) > 0 {
		l := <-lines
		switch {
		case strings.Contains(l, `"level":"error"`):
			errs = append(errs, l)
		case strings.Contains(l, `"level":"warn"`) && strings.Contains(l, "Duplicate executor ID: 1"):
			warned = append(warned, l)
		}
	}
	if len(warned) != 1 || len(errs) != 0 {
		t.Fatalf("logged %d warnings of the refusal (want 1) and errors %q (want none)", len(warned), errs)
	}
}
