package resourcemanager_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// Two resource managers given one --staging-dir (two clusters on one
// machine, a test RM beside the real one): neither the start nor the
// Shutdown of the second removes what the first, still running, staged
// for its applications. docs/security.md says the folders removed are
// those of applications "no resource manager will know again"; those of a
// live resource manager are not. Before, both removed every application's
// folder there, the running one's too.
func TestStagingFolderSharedByTwoResourceManagers(t *testing.T) {
	dir := t.TempDir()
	net := actor.NewMemNetwork()
	rm1, err := resourcemanager.Start(memEnv(t, net, "rm1", 1, nil), resourcemanager.Config{StagingDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer rm1.Shutdown(context.Background())
	client := rmclient.New(memEnv(t, net, "client", 0, nil), rm1.Address())
	ctx := testutil.Context(t, 10*time.Second)
	id, _, err := client.NewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Stage(ctx, id, rmclient.Resource{Name: "data.txt", Kind: fileKind, Path: writeFile(t, "data.txt", "some data")}); err != nil {
		t.Fatal(err)
	}
	staged := filepath.Join(dir, id, "data.txt")
	if _, err := os.Stat(staged); err != nil {
		t.Fatalf("not staged: %v", err)
	}

	rm2, err := resourcemanager.Start(memEnv(t, net, "rm2", 2, nil), resourcemanager.Config{StagingDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(staged); err != nil {
		t.Errorf("the start of a second resource manager on the folder removed the first one's staging of %s: %v", id, err)
	}
	// What the first stages while the second runs.
	if _, err := client.Stage(ctx, id, rmclient.Resource{Name: "more.txt", Kind: fileKind, Path: writeFile(t, "more.txt", "more data")}); err != nil {
		t.Fatal(err)
	}
	staged = filepath.Join(dir, id, "more.txt")
	if err := rm2.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(staged); err != nil {
		t.Errorf("the Shutdown of a second resource manager on the folder removed the first one's staging of %s: %v", id, err)
	}
}
