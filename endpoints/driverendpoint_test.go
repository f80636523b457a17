package endpoints_test

import (
	"context"
	"strings"
	"testing"

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
