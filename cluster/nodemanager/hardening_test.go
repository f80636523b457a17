package nodemanager_test

import (
	"context"
	"errors"
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
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// rogueNMRef returns a ref to node manager i of mc from an env of the
// memory network that is not the resource manager's.
func rogueNMRef(mc *clustertest.MemCluster, i int) *actor.Ref {
	mc.T.Helper()
	log := zerolog.New(zerolog.NewTestWriter(mc.T)).Level(zerolog.WarnLevel)
	env, err := actor.NewEnv("rogue", nil, actor.WithTransport(mc.Net.ClientTransport()), actor.WithLogger(log))
	if err != nil {
		mc.T.Fatal(err)
	}
	mc.T.Cleanup(func() { env.Shutdown(context.Background()) })
	addr, err := actor.ParseHostPort(mc.NMs[i].NodeID())
	if err != nil {
		mc.T.Fatal(err)
	}
	return env.RemoteRef(addr, cluster.NodeManagerEndpointName)
}

// An application or container id is never a path: "../../victim" made the
// node manager create (and on exit remove) a folder outside its own.
func TestNodeManagerRefusesIDsThatAreNotIDs(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	ref := rogueNMRef(mc, 0)
	nodeDir := mc.NMs[0].Dir()
	outside := filepath.Join(filepath.Dir(nodeDir), "victim")
	for _, tc := range []struct{ app, container string }{
		{"../../victim", "container_1_0001_01_000001"},
		{"application_1_0001", "../../../victim"},
		{"application_1_0001/../../../victim", "container_1_0001_01_000001"},
		{"application_1_0001", "container_1_0001_01_000001/../../../../victim"},
	} {
		_, err := ref.AskSync(testutil.Context(t, 10*time.Second), &messages.NmStartContainer{AppId: tc.app,
			Container:     &messages.RmContainer{ContainerId: tc.container, Resource: &messages.RmResource{MemoryMb: 64, Cores: 1}},
			LaunchContext: &messages.RmLaunchContext{Command: []string{"/bin/sh", "-c", "true"}}})
		if err == nil || !strings.Contains(err.Error(), "invalid") {
			t.Errorf("start of app %q container %q: %v, want an invalid id error", tc.app, tc.container, err)
		}
		if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("app %q container %q: %s exists (%v)", tc.app, tc.container, outside, err)
		}
	}
	// Logs too: no id reads outside the node's log folder.
	_, err := ref.AskSync(testutil.Context(t, 10*time.Second), &messages.NmReadContainerLog{AppId: "application_1_0001",
		ContainerId: "..", Name: "stdout", Length: 10})
	if err == nil {
		t.Fatal("a log read of container .. succeeded")
	}
}

func TestValidateIDs(t *testing.T) {
	for _, id := range []string{"application_1_0001", "application_1733000000000_12345"} {
		if err := cluster.ValidateAppID(id); err != nil {
			t.Errorf("ValidateAppID(%q): %v", id, err)
		}
	}
	for _, id := range []string{"", "application_", "application_1_", "application_1_2_3", "../application_1_2", "application_1_2/..", "application_-1_2", "application_1_2\n"} {
		if err := cluster.ValidateAppID(id); !errors.Is(err, cluster.ErrInvalidID) {
			t.Errorf("ValidateAppID(%q): %v, want ErrInvalidID", id, err)
		}
	}
	if err := cluster.ValidateContainerID("container_1_0001_01_000001"); err != nil {
		t.Error(err)
	}
	for _, id := range []string{"", "container_1_0001_01", "container_1_0001_01_000001/..", "..", "stdout"} {
		if err := cluster.ValidateContainerID(id); !errors.Is(err, cluster.ErrInvalidID) {
			t.Errorf("ValidateContainerID(%q): %v, want ErrInvalidID", id, err)
		}
	}
}

// A container's folders are its user's only, its files and logs too, and
// it sees a clean environment rather than the node manager's.
func TestContainerFilesArePrivateAndEnvironmentClean(t *testing.T) {
	t.Setenv("SPARKRPC_NM_PRIVATE_TEST", "the node manager's own")
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	h := mc.SubmitShell(`env; echo done; sleep 60`, cluster.Resource{MemoryMB: 256, Cores: 1})
	dir := mc.AMLogDir(h)
	testutil.Eventually(t, 10*time.Second, "the AM's output", func() bool {
		return strings.Contains(readFile(t, filepath.Join(dir, "stdout")), "done")
	})
	out := readFile(t, filepath.Join(dir, "stdout"))
	if strings.Contains(out, "SPARKRPC_NM_PRIVATE_TEST") {
		t.Errorf("the container inherited the node manager's environment:\n%s", out)
	}
	for _, want := range []string{"PATH=", "CONTAINER_ID=container_", "SPARKRPC_APP_ID=" + h.AppID()} {
		if !strings.Contains(out, want) {
			t.Errorf("container environment lacks %s:\n%s", want, out)
		}
	}
	var checked int
	err := filepath.Walk(mc.NMs[0].Dir(), func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if path == mc.NMs[0].Dir() {
			return nil
		}
		checked++
		want := os.FileMode(0o600)
		if info.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %#o, want %#o", path, info.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 6 { // apps, app, container, conf; logs, app, container, stdout, stderr
		t.Fatalf("only %d entries under the node's folder", checked)
	}
	if st, err := os.Stat(mc.NMs[0].Dir()); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("node folder: %v, %v", st, err)
	}
}

// A node manager that starts removes the working folders and localized
// resources that containers of an earlier run left behind.
func TestNodeManagerRemovesLeftoversOnStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "node")
	left := filepath.Join(dir, "apps", "application_1_0001", "container_1_0001_01_000001")
	if err := os.MkdirAll(left, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, cluster.StagingConfFile), []byte("spark.x=y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "apps", "application_1_0002", "filecache")
	if err := os.MkdirAll(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, strings.Repeat("ab", 32)), []byte("a program"), 0o700); err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	net := actor.NewMemNetwork()
	rmEnv, err := actor.NewEnv("rm", nil, actor.WithTransport(net.Transport("rm", 1)), actor.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rmEnv.Shutdown(context.Background()) })
	rm, err := resourcemanager.Start(rmEnv, resourcemanager.Config{StagingDir: t.TempDir(), Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rm.Shutdown(context.Background()) })
	env, err := actor.NewEnv("nm", nil, actor.WithTransport(net.Transport("127.0.0.1", 2)), actor.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Shutdown(context.Background()) })
	nm, err := nodemanager.Start(testutil.Context(t, 10*time.Second), env, nodemanager.Config{ResourceManager: rm.Address(),
		Capability: cluster.Resource{MemoryMB: 1024, Cores: 1}, Dir: dir, Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nm.Shutdown(context.Background()) })
	if _, err := os.Stat(filepath.Join(dir, "apps", "application_1_0001")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dead container's folder is still there: %v", err)
	}
	if _, err := os.Stat(cache); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dead application's localized resources are still there: %v", err)
	}
}

// A node manager starts and stops containers on its resource manager's
// word only: any other peer could run what it liked on the node.
func TestNodeManagerTakesContainerStartsFromItsResourceManagerOnly(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	ref := rogueNMRef(mc, 0)
	dir := t.TempDir()
	proof := filepath.Join(dir, "ran")
	_, err := ref.AskSync(testutil.Context(t, 10*time.Second), &messages.NmStartContainer{AppId: "application_1_0001",
		Container:     &messages.RmContainer{ContainerId: "container_1_0001_01_000001", Resource: &messages.RmResource{MemoryMb: 64, Cores: 1}},
		LaunchContext: &messages.RmLaunchContext{Command: []string{"/bin/sh", "-c", "touch " + proof}}})
	if !errors.Is(err, cluster.ErrPermissionDenied) && (err == nil || !strings.Contains(err.Error(), "permission denied")) {
		t.Fatalf("a container start from another peer: %v, want permission denied", err)
	}
	if got := mc.NMs[0].Containers(); len(got) != 0 {
		t.Fatalf("containers running: %v", got)
	}
	if _, err := os.Stat(proof); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the container ran: %v", err)
	}
	// Stops too: the resource manager's containers are not another peer's to stop.
	h := mc.SubmitShell(`sleep 60`, cluster.Resource{MemoryMB: 256, Cores: 1})
	testutil.Eventually(t, 10*time.Second, "the AM container", func() bool { return len(mc.NMs[0].Containers()) == 1 })
	_, err = ref.AskSync(testutil.Context(t, 10*time.Second), &messages.NmStopContainer{ContainerId: mc.NMs[0].Containers()[0]})
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("a container stop from another peer: %v, want permission denied", err)
	}
	if r, err := h.Poll(context.Background()); err != nil || r.State.Terminal() {
		t.Fatalf("after the refused stop: %+v, %v", r, err)
	}
}

// With spark.acls.enable, only the owner, a modify-ACL user or an admin
// kills an application, and only the owner, a view-ACL user or an admin
// reads its logs.
func TestACLsGuardKillAndLogs(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	k, v, _ := strings.Cut(mc.Marker, "=")
	owner := mc.Client.AsUser("alice")
	h, err := owner.Submit(testutil.Context(t, 10*time.Second), rmclient.Submission{Name: "shell", AMResource: cluster.Resource{MemoryMB: 256, Cores: 1},
		AMCommand: []string{"/bin/sh", "-c", "echo hello; sleep 60"}, AMEnv: map[string]string{k: v},
		ACLs:           cluster.ACLs{Enabled: true, View: []string{"victor"}, Modify: []string{"mod"}},
		ReportInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	mc.AMLogDir(h)
	ctx := testutil.Context(t, 20*time.Second)
	for _, user := range []string{"mallory", "mod"} {
		listing, err := mc.Client.AsUser(user).ApplicationLogs(ctx, h.AppID())
		if err != nil {
			t.Fatal(err)
		}
		if len(listing.Logs) != 0 || len(listing.Unavailable) != 1 || !strings.Contains(listing.Unavailable[0], "permission denied") {
			t.Errorf("logs as %s: %+v", user, listing)
		}
	}
	for _, user := range []string{"alice", "victor"} {
		listing, err := mc.Client.AsUser(user).ApplicationLogs(ctx, h.AppID())
		if err != nil || len(listing.Logs) != 2 {
			t.Errorf("logs as %s: %+v, %v", user, listing, err)
		}
	}
	for _, user := range []string{"mallory", "victor"} {
		if _, err := mc.Client.AsUser(user).Kill(ctx, h.AppID(), ""); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("kill as %s: %v, want permission denied", user, err)
		}
	}
	if r, err := h.Poll(ctx); err != nil || r.State != cluster.StateAccepted && r.State != cluster.StateRunning {
		t.Fatalf("after the refused kills: %+v, %v", r, err)
	}
	if killed, err := mc.Client.AsUser("mod").Kill(ctx, h.AppID(), ""); err != nil || !killed {
		t.Fatalf("kill as a modify-ACL user: %v, %v", killed, err)
	}
}
