package resourcemanager_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Only the user and the client that created an application submit it, as
// only they stage for it. Before, any client with the cluster's key could
// submit another client's NEW application with an AM command, user, ACLs
// and secret of its own (the creator's submission then failed with "already
// ACCEPTED"), and a submission of its that the resource manager refused
// removed everything the creator had staged.
func TestOnlyTheCreatorSubmits(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	ctx := testutil.Context(t, 30*time.Second)
	aliceEnv := memEnv(t, mc.Net, "alice", 0, nil)
	alice := rmclient.New(aliceEnv, mc.RM.Address()).AsUser("alice")
	id, _, err := alice.NewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	staged, err := alice.Stage(ctx, id, rmclient.Resource{Name: "data.txt", Kind: fileKind, Path: writeFile(t, "data.txt", "alice's data")})
	if err != nil {
		t.Fatal(err)
	}
	submission := func(user string, resources ...*messages.RmLocalResource) *messages.RmSubmitApplication {
		return &messages.RmSubmitApplication{AppId: id, User: user, Name: user + "'s",
			AmResource:      &messages.RmResource{MemoryMb: 64, Cores: 1},
			AmLaunchContext: &messages.RmLaunchContext{Command: []string{"/bin/true"}, Resources: resources}}
	}

	mallory := memEnv(t, mc.Net, "mallory", 0, nil).RemoteRef(mc.RM.Address(), cluster.ResourceManagerEndpointName)
	// A submission that names what alice did not stage: refused, and it
	// must not take alice's staging with it.
	_, err = mallory.AskSync(ctx, submission("mallory", &messages.RmLocalResource{Name: "data.txt", Kind: fileKind, Size: 1, Sha256: make([]byte, 32)}))
	wantRemote(t, "another client's refused submission", err, cluster.ErrPermissionDenied)
	if _, err := os.Stat(filepath.Join(mc.Staging, id, "data.txt")); err != nil {
		t.Errorf("another client's refused submission removed the creator's staged file: %v", err)
	}
	// One that would be accepted.
	_, err = mallory.AskSync(ctx, submission("mallory"))
	wantRemote(t, "another client's submission", err, cluster.ErrPermissionDenied)
	_, err = mallory.AskSync(ctx, submission("alice"))
	wantRemote(t, "another client's submission under the creator's name", err, cluster.ErrPermissionDenied)
	// Nor another user on the creator's connection.
	rm := aliceEnv.RemoteRef(mc.RM.Address(), cluster.ResourceManagerEndpointName)
	_, err = rm.AskSync(ctx, submission("bob"))
	wantRemote(t, "another user's submission", err, cluster.ErrPermissionDenied)

	if r, err := alice.Report(ctx, id); err != nil || r.State != cluster.StateNew {
		t.Fatalf("after the refusals the application is %v (%v), want NEW", r, err)
	}
	if _, err := rm.AskSync(ctx, submission("alice", staged)); err != nil {
		t.Fatalf("the creator's submission: %v", err)
	}
	if _, err := alice.Kill(ctx, id, "done"); err != nil {
		t.Fatal(err)
	}
}
