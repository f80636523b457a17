package resourcemanager_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// The staging folder of an application the resource manager knew when it
// stopped (here, one that staged its program and was never submitted: a
// running application's is the same) does not outlive it: no resource
// manager will ever know that application again, so nothing else would
// remove it. Neither its own Shutdown nor the next resource manager
// started on the same --staging-dir may leave it there. Before, a staging
// folder the resource manager was given (not one it made) kept every
// application's for ever.
func TestStagingFolderDoesNotOutliveTheResourceManager(t *testing.T) {
	dir := t.TempDir()
	net := actor.NewMemNetwork()
	rm, err := resourcemanager.Start(memEnv(t, net, "rm", 1, nil), resourcemanager.Config{StagingDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	client := rmclient.New(memEnv(t, net, "client", 0, nil), rm.Address())
	ctx := testutil.Context(t, 10*time.Second)
	id, _, err := client.NewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Stage(ctx, id, rmclient.Resource{Name: "data.txt", Kind: fileKind, Path: writeFile(t, "data.txt", "some data")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(rm.StagingDir() + "/" + id + "/data.txt"); err != nil {
		t.Fatalf("not staged: %v", err)
	}
	if err := rm.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("after Shutdown, the staging folder holds %v", names(left))
	}

	// A resource manager that died without its Shutdown (SIGKILL, a
	// crash) left one behind: the next one on the folder removes it.
	if err := os.MkdirAll(dir+"/application_1700000000000_0001", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/application_1700000000000_0001/__app__", []byte("program"), 0o600); err != nil {
		t.Fatal(err)
	}
	rm2, err := resourcemanager.Start(memEnv(t, net, "rm2", 2, nil), resourcemanager.Config{StagingDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer rm2.Shutdown(context.Background())
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a new resource manager keeps the staging folders of applications it cannot know: %v", names(left))
	}
}

func names(entries []os.DirEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
