package yarn

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A malformed spark.yarn.submit.waitAppCompletion fails a cluster-mode
// submission to a resource manager before anything is submitted, with a
// *actor.ConfError naming the key: not once the application runs, which
// submit then neither follows nor reports (and the operator, told the
// submission failed, submits it again).
// Before, the key was read after the submission.
func TestMalformedWaitAppCompletionSubmitsNothing(t *testing.T) {
	failing, err := exec.LookPath("false")
	if err != nil {
		t.Skip("no false command")
	}
	ctx := testutil.Context(t, time.Minute)
	lc, err := StartLocalCluster(ctx, LocalClusterConfig{Workers: 1, WorkerCores: 1, WorkerMemoryMB: 1024,
		AMNode: cluster.Resource{MemoryMB: 1024, Cores: 1}, Dir: t.TempDir(), Executable: failing, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lc.Shutdown(context.Background()) })
	m, err := cluster.ParseMaster("rm://" + lc.Address().HostPort())
	if err != nil {
		t.Fatal(err)
	}
	conf := actor.NewConf().Set(cluster.KeyDeployMode, "cluster").Set(cluster.KeyWaitAppCompletion, "maybe").
		Set(cluster.KeyDriverMemory, "512m").Set(cluster.KeyExecutorMemory, "512m").Set(cluster.KeyReportInterval, "200ms")
	var stderr testutil.SyncBuffer
	err = cluster.Submit(ctx, cluster.SubmitConfig{Master: m, Class: "SparkPi", Conf: conf, Stderr: &stderr,
		Logger: zerolog.Nop(), Executable: failing}, Manager{})
	var ce *actor.ConfError
	if !errors.As(err, &ce) || ce.Key != cluster.KeyWaitAppCompletion {
		t.Errorf("Submit = %v, want a *actor.ConfError naming %s", err, cluster.KeyWaitAppCompletion)
	}
	if strings.Contains(stderr.String(), "Submitted application") {
		t.Errorf("the application was submitted before the key was checked:\n%s", stderr.String())
	}
}
