package nodemanager_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A container's process that starts a child in a session (and so a process
// group) of its own does not leave it running: the node manager also stops
// the processes whose environment says they are the container's. Before,
// it signalled only the container's process group, and the parent-death
// signal covers only its direct child, so the grandchild outlived both the
// container's kill and the node manager's shutdown.
func TestANewSessionDoesNotOutliveItsContainer(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	// Runs before the cluster's own check that no container process is
	// left: the test reports the escape once, not twice.
	t.Cleanup(func() {
		for _, pid := range clustertest.MarkedProcesses(mc.Marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	h := mc.SubmitShell(`setsid sleep 300 & sleep 300`, cluster.Resource{MemoryMB: 256, Cores: 1})
	testutil.Eventually(t, 10*time.Second, "the container and its two sleeps", func() bool {
		return len(mc.NMs[0].Containers()) == 1 && len(clustertest.MarkedProcesses(mc.Marker)) == 3
	})
	if _, err := mc.Client.Kill(context.Background(), h.AppID(), "kill it"); err != nil {
		t.Fatal(err)
	}
	if r, _ := h.Wait(testutil.Context(t, 10*time.Second)); r.State != cluster.StateKilled {
		t.Fatalf("application %s, want KILLED", r.State)
	}
	testutil.Eventually(t, 10*time.Second, "the node manager to report the container complete", func() bool {
		return len(mc.NMs[0].Containers()) == 0
	})
	if err := mc.NMs[0].Shutdown(testutil.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if pids := clustertest.MarkedProcesses(mc.Marker); len(pids) > 0 {
		for _, pid := range pids {
			pgid, _ := syscall.Getpgid(pid)
			t.Errorf("process %d (process group %d) of the killed container still runs after the kill and the node manager's shutdown", pid, pgid)
		}
		t.Fatalf("%d container process(es) escaped", len(pids))
	}
}
