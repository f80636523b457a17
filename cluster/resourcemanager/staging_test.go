package resourcemanager_test

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

const fileKind = messages.RmResourceKind_RM_RESOURCE_KIND_FILE

// memEnv returns an env of net: listening at host:port, or a client's when
// port is 0.
func memEnv(t *testing.T, net *actor.MemNetwork, name string, port int, conf *actor.Conf) *actor.Env {
	t.Helper()
	tr := net.ClientTransport()
	if port != 0 {
		tr = net.Transport("127.0.0.1", port)
	}
	env, err := actor.NewEnv(name, conf, actor.WithTransport(tr), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Shutdown(context.Background()) })
	return env
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantRemote fails t unless err is (or, from another env, reads as) target
// and holds every one of texts.
func wantRemote(t *testing.T, what string, err, target error, texts ...string) {
	t.Helper()
	if !cluster.RemoteIs(err, target) {
		t.Errorf("%s: %v, want %v", what, err, target)
		return
	}
	for _, s := range texts {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: %v, want it to say %q", what, err, s)
		}
	}
}

// Only the user and the client that created an application stage for it,
// in order, under names a container's working folder can hold, and only
// before it is submitted; a commit must state what was staged; a
// submission names only what was committed; node managers without the
// application's containers, and clients, read nothing.
func TestStagingRules(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	ctx := testutil.Context(t, 30*time.Second)
	data := writeFile(t, "data.txt", "some data")
	// raw creates both applications: only it stages for them and submits
	// them.
	rawEnv := memEnv(t, mc.Net, "raw", 0, nil)
	rm := rawEnv.RemoteRef(mc.RM.Address(), cluster.ResourceManagerEndpointName)
	raw := rmclient.New(rawEnv, mc.RM.Address())
	id, _, err := raw.NewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res := rmclient.Resource{Name: "data.txt", Kind: fileKind, Path: data}
	staged, err := raw.Stage(ctx, id, res)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("some data"))
	if staged.GetSize() != 9 || string(staged.GetSha256()) != string(sum[:]) {
		t.Fatalf("staged %v", staged)
	}

	_, err = raw.AsUser("mallory").Stage(ctx, id, res)
	wantRemote(t, "another user's staging", err, cluster.ErrPermissionDenied)
	_, err = mc.Client.Stage(ctx, id, res)
	wantRemote(t, "another client's staging", err, cluster.ErrPermissionDenied)
	for _, name := range []string{"../escape", "", cluster.AppResourceName, cluster.StagingConfFile} {
		_, err = raw.Stage(ctx, id, rmclient.Resource{Name: name, Kind: fileKind, Path: data})
		wantRemote(t, "a file named "+name, err, cluster.ErrInvalidID)
	}

	id2, _, err := raw.NewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	chunk := func(off int64, data string) error {
		_, err := rm.AskSync(ctx, &messages.RmStageChunk{AppId: id2, User: raw.User(), Name: "x", Kind: fileKind, Offset: off, Data: []byte(data)})
		return err
	}
	if err := chunk(0, "abc"); err != nil {
		t.Fatal(err)
	}
	wantRemote(t, "a chunk past the end", chunk(7, "def"), cluster.ErrInvalidState, "offset 7", "3 bytes staged")
	wantRemote(t, "a chunk before the end", chunk(1, "def"), cluster.ErrInvalidState)
	commit := func(name string, size int64, sum []byte) error {
		_, err := rm.AskSync(ctx, &messages.RmStageCommit{AppId: id2, User: raw.User(),
			Resource: &messages.RmLocalResource{Name: name, Kind: fileKind, Size: size, Sha256: sum}})
		return err
	}
	abc := sha256.Sum256([]byte("abc"))
	wantRemote(t, "a commit with another digest", commit("x", 3, sum[:]), cluster.ErrResourceMismatch, `"x" has 3 bytes`)
	// The mismatch dropped the resource.
	if _, err := os.Stat(filepath.Join(mc.Staging, id2, "x")); !os.IsNotExist(err) {
		t.Errorf("a resource refused at its commit is still staged: %v", err)
	}
	wantRemote(t, "a commit of nothing", commit("x", 3, abc[:]), cluster.ErrNotStaged)
	empty := sha256.Sum256(nil)
	if err := commit("empty", 0, empty[:]); err != nil {
		t.Errorf("an empty file: %v", err)
	}

	// Node managers read only the resources of applications with a
	// container on their node; clients read none.
	fetch := &messages.RmFetchResource{AppId: id, Name: "data.txt", Length: 100}
	_, err = rm.AskSync(ctx, fetch)
	wantRemote(t, "a client's read", err, cluster.ErrPermissionDenied)
	node := memEnv(t, mc.Net, "node", 300, nil).RemoteRef(mc.RM.Address(), cluster.ResourceManagerEndpointName)
	if _, err := node.AskSync(ctx, &messages.NmRegister{NodeId: "127.0.0.1:300", Address: "127.0.0.1:300", Host: "127.0.0.1",
		Capability: &messages.RmResource{MemoryMb: 64, Cores: 1}}); err != nil {
		t.Fatal(err)
	}
	_, err = node.AskSync(ctx, fetch)
	wantRemote(t, "a read by a node without the application's containers", err, cluster.ErrPermissionDenied)

	// A submission names only committed resources, as they were committed.
	submit := func(id string, r *messages.RmLocalResource) error {
		_, err := rm.AskSync(ctx, &messages.RmSubmitApplication{AppId: id,
			User: raw.User(), AmResource: &messages.RmResource{MemoryMb: 64, Cores: 1},
			AmLaunchContext: &messages.RmLaunchContext{Command: []string{"/bin/true"}, Resources: []*messages.RmLocalResource{r}}})
		return err
	}
	wantRemote(t, "a submission naming what was not staged", submit(id2, &messages.RmLocalResource{Name: "x", Kind: fileKind, Size: 3, Sha256: abc[:]}),
		cluster.ErrNotStaged)
	if _, err := os.Stat(filepath.Join(mc.Staging, id2)); !os.IsNotExist(err) {
		t.Errorf("a refused submission left its staging folder: %v", err)
	}
	if err := submit(id, staged); err != nil {
		t.Fatal(err)
	}
	_, err = raw.Stage(ctx, id, res)
	wantRemote(t, "staging after the submission", err, cluster.ErrInvalidState, "before the submission")
}

// An application stages at most spark.sparkrpc.yarn.staging.maxAppSize
// bytes (the resource manager's conf).
func TestStagingLimit(t *testing.T) {
	net := actor.NewMemNetwork()
	conf := actor.NewConf().Set(cluster.KeyStagingMaxAppSize, "3k")
	rm, err := resourcemanager.Start(memEnv(t, net, "rm", 1, conf), resourcemanager.Config{StagingDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rm.Shutdown(context.Background()) })
	client := rmclient.New(memEnv(t, net, "client", 0, nil), rm.Address())
	ctx := testutil.Context(t, 10*time.Second)
	id, _, err := client.NewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Stage(ctx, id, rmclient.Resource{Name: "a", Kind: fileKind, Path: writeFile(t, "a", strings.Repeat("a", 2000))}); err != nil {
		t.Fatal(err)
	}
	_, err = client.Stage(ctx, id, rmclient.Resource{Name: "b", Kind: fileKind, Path: writeFile(t, "b", strings.Repeat("b", 2000))})
	wantRemote(t, "staging past the limit", err, cluster.ErrStagingLimit, cluster.KeyStagingMaxAppSize, "at most 3072 bytes", "2000 are staged")
}
