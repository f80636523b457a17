package rmclient_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A submission that Submit refuses after it has asked for a new
// application (the AM does not fit the largest node, or the resource
// manager refuses the submission) leaves no application behind: as when
// staging fails (the application is killed) or files clash (nothing is
// asked), the resource manager lists no application still NEW.
func TestRefusedSubmitLeavesNoNewApplication(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 1})
	ctx := testutil.Context(t, 10*time.Second)
	testutil.Eventually(t, 10*time.Second, "the node to register", func() bool {
		n, err := mc.Client.Nodes(ctx)
		return err == nil && len(n) == 1
	})
	_, err := mc.Client.Submit(ctx, rmclient.Submission{AMResource: cluster.Resource{MemoryMB: 4096, Cores: 1},
		AMCommand: []string{"/bin/true"}})
	var tooLarge *cluster.ResourceTooLargeError
	if !errors.As(err, &tooLarge) {
		t.Fatalf("err = %v, want a ResourceTooLargeError", err)
	}
	_, err = mc.Client.Submit(ctx, rmclient.Submission{Queue: "no-such-queue", AMResource: cluster.Resource{MemoryMB: 256, Cores: 1},
		AMCommand: []string{"/bin/true"}})
	if err == nil {
		t.Fatal("a submission to an unknown queue was accepted")
	}
	apps, err := mc.Client.Applications(ctx, cluster.StateNew)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range apps {
		t.Errorf("application %s left in state %s after its submission failed", a.ID, a.State)
	}
}
