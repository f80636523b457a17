package resourcemanager_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// An application stages at most resourcemanager.MaxStagedResources
// resources: spark.sparkrpc.yarn.staging.maxAppSize counts their bytes,
// which empty files do not have, and each takes a file of the staging
// folder and an entry in the resource manager's memory. The one past the
// bound is refused with an error that matches ErrStagingLimit, and those
// before it stay. Before, one client staged any number of empty files.
func TestStagingBoundsTheNumberOfResources(t *testing.T) {
	net := actor.NewMemNetwork()
	staging := t.TempDir()
	rm, err := resourcemanager.Start(memEnv(t, net, "rm", 1, nil), resourcemanager.Config{StagingDir: staging})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rm.Shutdown(context.Background()) })
	env := memEnv(t, net, "client", 0, nil)
	client := rmclient.New(env, rm.Address())
	ctx := testutil.Context(t, 5*time.Minute)
	id, _, err := client.NewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ref := env.RemoteRef(rm.Address(), cluster.ResourceManagerEndpointName)
	empty := sha256.Sum256(nil)
	stage := func(i int) error {
		_, err := ref.AskSync(ctx, &messages.RmStageCommit{AppId: id, User: client.User(),
			Resource: &messages.RmLocalResource{Name: fmt.Sprintf("f%05d", i), Kind: fileKind, Size: 0, Sha256: empty[:]}})
		return err
	}
	for i := range resourcemanager.MaxStagedResources {
		if err := stage(i); err != nil {
			t.Fatalf("resource %d of %d: %v", i+1, resourcemanager.MaxStagedResources, err)
		}
	}
	err = stage(resourcemanager.MaxStagedResources)
	ents, _ := os.ReadDir(filepath.Join(staging, id))
	if !cluster.RemoteIs(err, cluster.ErrStagingLimit) || len(ents) != resourcemanager.MaxStagedResources {
		t.Fatalf("resource %d: %v, with %d in the staging folder; want an error that matches ErrStagingLimit, and %d",
			resourcemanager.MaxStagedResources+1, err, len(ents), resourcemanager.MaxStagedResources)
	}
}
