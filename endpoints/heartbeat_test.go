package endpoints_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

func TestHeartbeatExpiryRemovesASilentExecutor(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		conf := testConf(endpoints.KeyHeartbeatInterval, "50ms", actor.KeyNetworkTimeout, "600ms",
			endpoints.KeyTimeoutInterval, "50ms")
		// The real executor heartbeats every 50ms (the driver's setting,
		// which it takes from the driver's properties).
		c := startCluster(t, nw, conf, 1, 1)
		silent := newFakeExecutor(t, nw, c.Driver.URL())
		if err := silent.register("silent", "h", 1); err != nil {
			t.Fatal(err)
		}
		evs := c.rec.waitFor(t, "the silent executor removed", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.ExecutorRemoved) bool { return e.ExecutorID == "silent" }) == 1
		})
		for _, ev := range evs {
			if e, ok := ev.(endpoints.ExecutorRemoved); ok {
				if e.ExecutorID != "silent" {
					t.Fatalf("executor %s removed too: %q", e.ExecutorID, e.Reason)
				}
				if !strings.HasPrefix(e.Reason, "Executor heartbeat timed out after ") || !strings.HasSuffix(e.Reason, " ms") {
					t.Fatalf("reason = %q", e.Reason)
				}
			}
		}
		testutil.Recv(t, silent.stops, testTimeout, "the silent executor's StopExecutor")
		if _, ok := executor(c.Driver, "1"); !ok {
			t.Fatal("the executor that heartbeats was removed")
		}
	})
}

// An executor whose heartbeats keep failing exits with code 56 and tells
// the driver.
func TestHeartbeatFailuresMakeTheExecutorExit(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(endpoints.KeyHeartbeatInterval, "20ms", endpoints.KeyHeartbeatMaxFailures, "3"), 1, 1)
		hb, ok := c.env.Endpoint(endpoints.HeartbeatEndpointName)
		if !ok {
			t.Fatal("no HeartbeatReceiver on the driver's env")
		}
		if err := c.env.Stop(hb); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, testTimeout, "the executor returned", func() bool { return len(c.ExecutorErrors()) == 1 })
		var ee *endpoints.ExitError
		if err := c.ExecutorErrors()["1"]; !errors.As(err, &ee) || ee.Code != endpoints.ExitCodeHeartbeatFailure ||
			ee.Reason != "Unable to send heartbeats to driver more than 3 times" {
			t.Fatalf("RunExecutor = %v; want exit code 56", err)
		}
		c.rec.waitFor(t, "the executor removed with the reason", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.ExecutorRemoved) bool { return e.Reason == ee.Reason }) == 1
		})
	})
}

// LastHeartbeats shows each executor's latest heartbeat, moving forward,
// and forgets a removed executor.
func TestLastHeartbeats(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(endpoints.KeyHeartbeatInterval, "20ms"), 2, 1)
		// The HeartbeatReceiver learns of a registration by a one-way message.
		var first map[string]time.Time
		testutil.Eventually(t, testTimeout, "executors 1 and 2 in LastHeartbeats", func() bool {
			first = c.Driver.LastHeartbeats()
			return len(first) == 2 && !first["1"].IsZero() && !first["2"].IsZero()
		})
		testutil.Eventually(t, testTimeout, "executor 1's heartbeat time to move", func() bool {
			return c.Driver.LastHeartbeats()["1"].After(first["1"])
		})
		if err := c.Driver.RemoveExecutor("2", "test"); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, testTimeout, "executor 2 gone from LastHeartbeats", func() bool {
			_, ok := c.Driver.LastHeartbeats()["2"]
			return !ok
		})
	})
}

// Executors whose heartbeats expire in one check are removed in the order
// of their ids, not in a map's order, so that a run replays the same way.
func TestHeartbeatExpiryRemovesInIDOrder(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		conf := testConf(endpoints.KeyHeartbeatInterval, "50ms", actor.KeyNetworkTimeout, "600ms",
			endpoints.KeyTimeoutInterval, "50ms")
		c := startCluster(t, nw, conf, 1, 1)
		ids := []string{"silent-1", "silent-2", "silent-3", "silent-4", "silent-5", "silent-6"}
		for _, id := range ids {
			if err := newFakeExecutor(t, nw, c.Driver.URL()).register(id, "h", 1); err != nil {
				t.Fatal(err)
			}
		}
		evs := c.rec.waitFor(t, "the silent executors removed", func(evs []endpoints.Event) bool {
			return countEvents(evs, func(e endpoints.ExecutorRemoved) bool { return strings.HasPrefix(e.ExecutorID, "silent-") }) == len(ids)
		})
		var removed []string
		for _, ev := range evs {
			if e, ok := ev.(endpoints.ExecutorRemoved); ok {
				removed = append(removed, e.ExecutorID)
			}
		}
		if !slices.Equal(removed, ids) {
			t.Fatalf("removed %v, want %v", removed, ids)
		}
	})
}
