package endpoints_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// receiveWithin returns the next value of ch, failing t after testTimeout.
func receiveWithin[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testTimeout):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// The manager's loop asks the cluster manager for its initial target, then
// releases the executors idle past the idle timeout (down to minExecutors)
// through Driver.KillExecutors, asks for the target again, and keeps its
// decisions for Status.
func TestExecutorAllocationManagerReleasesIdleExecutors(t *testing.T) {
	cm := newFakeClusterManager()
	c := startCluster(t, memNetwork(), testConf(), 3, 1, endpoints.WithClusterManager(cm))
	cfg, err := endpoints.ParseAllocationConfig(testConf(endpoints.KeyDynamicAllocationEnabled, "true",
		endpoints.KeyDynamicAllocationMinExecutors, "1", endpoints.KeyDynamicAllocationInitialExecutors, "3",
		endpoints.KeyDynamicAllocationExecutorIdleTimeout, "50ms"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := endpoints.NewExecutorAllocationManager(c.Driver, cfg, endpoints.WithAllocationInterval(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	m.Start() // a second Start does nothing
	defer m.Stop()
	if n := receiveWithin(t, cm.requests, "the initial request"); n != 3 {
		t.Fatalf("initial request for %d executors; want 3", n)
	}
	// The executors went idle at different times, so a slow machine may
	// see them pass the idle timeout in different steps. The first one to
	// time out lowers the target to minExecutors; each release asks for it
	// again.
	var killed []string
	for len(killed) < 2 {
		killed = append(killed, receiveWithin(t, cm.kills, "idle executors released")...)
		if n := receiveWithin(t, cm.requests, "the target after a release"); n != 1 {
			t.Fatalf("target %d after releasing %v; want 1 (minExecutors)", n, killed)
		}
	}
	if len(killed) != 2 {
		t.Fatalf("released %v; want two of the three executors", killed)
	}
	m.Stop()
	if n := len(c.Driver.Executors()); n != 1 {
		t.Fatalf("%d executors left; want 1", n)
	}
	st := m.Status()
	var kindsSeen []string
	for _, d := range st.Decisions {
		kindsSeen = append(kindsSeen, d.Kind)
	}
	if st.Target != 1 || !slices.Contains(kindsSeen, endpoints.DecisionRemove) || kindsSeen[len(kindsSeen)-1] != endpoints.DecisionInitial {
		t.Fatalf("status: target %d, decisions (newest first) %v", st.Target, kindsSeen)
	}
}

func TestExecutorAllocationManagerNeedsAClusterManager(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(), 1, 1)
	cfg, err := endpoints.ParseAllocationConfig(testConf(endpoints.KeyDynamicAllocationEnabled, "true"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := endpoints.NewExecutorAllocationManager(c.Driver, cfg); !errors.Is(err, endpoints.ErrNoClusterManager) {
		t.Fatalf("error %v; want ErrNoClusterManager", err)
	}
}
