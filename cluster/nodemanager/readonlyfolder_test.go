package nodemanager_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A container that leaves a read-only folder in its working folder (an
// unpacked archive, a Go module cache, a chmod of its own) has its working
// folder removed, and the node manager starts again on its folder. Before,
// os.RemoveAll could not unlink what was inside, the error was ignored and
// the working folder stayed; the next node manager on that Dir did not
// start at all, its cleaning of Dir/apps failing. Root ignores folder
// modes, so as root the test runs itself again as nobody.
func TestAReadOnlyFolderInAContainerIsRemoved(t *testing.T) {
	if !testutil.AsNobody(t) {
		return
	}
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	nodeDir := mc.NMs[0].Dir()
	// Before t.TempDir's own removal: let it remove what the node left.
	t.Cleanup(func() {
		filepath.WalkDir(nodeDir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o700)
			}
			return nil
		})
	})
	h := mc.SubmitShell(`mkdir ro && echo x > ro/f && chmod 0555 ro && echo done`, cluster.Resource{MemoryMB: 256, Cores: 1})
	if r, err := h.Wait(testutil.Context(t, 10*time.Second)); err == nil || !strings.Contains(r.Diagnostics, "exitCode: 0") {
		t.Fatalf("report %+v, err %v; want the AM's exit with code 0", r, err)
	}
	testutil.Eventually(t, 10*time.Second, "the container to be reported complete", func() bool { return len(mc.NMs[0].Containers()) == 0 })
	if err := mc.NMs[0].Shutdown(testutil.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	var left []string
	filepath.WalkDir(filepath.Join(nodeDir, "apps"), func(p string, d os.DirEntry, err error) error {
		if err == nil {
			left = append(left, strings.TrimPrefix(p, nodeDir))
		}
		return nil
	})
	if len(left) > 1 {
		t.Errorf("after the container ended and the node manager stopped, its working folder is still there: %v", left)
	}

	// A node manager started again on the same folder.
	env, err := actor.NewEnv("nm-again", nil, actor.WithTransport(mc.Net.Transport("127.0.0.1", 199)), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Shutdown(context.Background()) })
	nm, err := nodemanager.Start(testutil.Context(t, 10*time.Second), env, nodemanager.Config{ResourceManager: mc.RM.Address(),
		Capability: cluster.Resource{MemoryMB: 1024, Cores: 2}, Dir: nodeDir, HeartbeatInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("a node manager restarted on the folder of one whose container left a read-only folder does not start: %v", err)
	}
	nm.Shutdown(testutil.Context(t, 10*time.Second))
}
