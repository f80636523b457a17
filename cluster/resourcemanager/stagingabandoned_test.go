package resourcemanager_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A submitter that dies while it stages (SIGKILL, a second Ctrl-C, an
// out-of-memory kill, a lost machine) cannot kill the application it
// created, and no other client may stage for it or finish it: the
// resource manager drops it once its creator's connection is gone, with
// what it staged, rather than keeping up to
// spark.sparkrpc.yarn.staging.maxAppSize of it on disk, and one of the
// MaxNewApps, for ever. Before, it was kept NEW, with its staging, until
// someone killed it.
func TestStagingOfAVanishedSubmitterIsRemoved(t *testing.T) {
	net := actor.NewMemNetwork()
	rm, err := resourcemanager.Start(memEnv(t, net, "rm", 1, nil), resourcemanager.Config{StagingDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rm.Shutdown(context.Background()) })
	ctx := testutil.Context(t, 20*time.Second)
	clientEnv, err := actor.NewEnv("submitter", nil, actor.WithTransport(net.ClientTransport()))
	if err != nil {
		t.Fatal(err)
	}
	client := rmclient.New(clientEnv, rm.Address())
	id, _, err := client.NewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Stage(ctx, id, rmclient.Resource{Name: "data.txt", Kind: fileKind, Path: writeFile(t, "data.txt", "some data")}); err != nil {
		t.Fatal(err)
	}
	staged := filepath.Join(rm.StagingDir(), id)
	if _, err := os.Stat(staged); err != nil {
		t.Fatal(err)
	}
	// The submitter goes away without a word.
	if err := clientEnv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	watcher := rmclient.New(memEnv(t, net, "watcher", 0, nil), rm.Address())
	testutil.Eventually(t, 10*time.Second, "the abandoned application's staging folder removed", func() bool {
		_, err := os.Stat(staged)
		return os.IsNotExist(err)
	})
	r, err := watcher.Report(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != cluster.StateKilled {
		t.Errorf("the abandoned application is %s, want KILLED", r.State)
	}
}
