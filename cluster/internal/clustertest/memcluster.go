package clustertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

var envSeq atomic.Int64

// MemCluster is a resource manager and node managers on an in-memory network.
type MemCluster struct {
	T       *testing.T
	Net     *actor.MemNetwork
	RM      *resourcemanager.ResourceManager
	NMs     []*nodemanager.NodeManager
	Client  *rmclient.Client
	Staging string
	Marker  string
}

// NewMemCluster starts a MemCluster with a node manager of each of the
// capabilities nodes; the test's cleanup stops it and checks that no
// container process is left.
func NewMemCluster(t *testing.T, nodes ...cluster.Resource) *MemCluster {
	t.Helper()
	return NewMemClusterGrace(t, 200*time.Millisecond, nodes...)
}

// NewMemClusterGrace is NewMemCluster with node managers whose stopped
// containers get grace between SIGTERM and SIGKILL.
func NewMemClusterGrace(t *testing.T, grace time.Duration, nodes ...cluster.Resource) *MemCluster {
	t.Helper()
	mc := &MemCluster{T: t, Net: actor.NewMemNetwork(), Staging: t.TempDir(),
		Marker: fmt.Sprintf("SPARKRPC_CLUSTER_TEST=%s-%d-%d", t.Name(), os.Getpid(), envSeq.Add(1))}
	// Registered first, so it runs last: after the node managers' shutdown,
	// no process a container started is left.
	t.Cleanup(func() {
		testutil.Eventually(t, 10*time.Second, "no container process left", func() bool { return len(MarkedProcesses(mc.Marker)) == 0 })
	})
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	rmEnv, err := actor.NewEnv("rm", nil, actor.WithTransport(mc.Net.Transport("rm", 1)), actor.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rmEnv.Shutdown(context.Background()) })
	mc.RM, err = resourcemanager.Start(rmEnv, resourcemanager.Config{StagingDir: mc.Staging, NodeExpiry: time.Minute, Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mc.RM.Shutdown(context.Background()) })
	for i, res := range nodes {
		env, err := actor.NewEnv(fmt.Sprintf("nm%d", i), nil, actor.WithTransport(mc.Net.Transport("127.0.0.1", 100+i)), actor.WithLogger(log))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { env.Shutdown(context.Background()) })
		nm, err := nodemanager.Start(testutil.Context(t, 10*time.Second), env, nodemanager.Config{ResourceManager: mc.RM.Address(),
			Capability: res, Dir: filepath.Join(t.TempDir(), "node"), KillGrace: grace,
			HeartbeatInterval: 50 * time.Millisecond, Logger: &log})
		if err != nil {
			t.Fatal(err)
		}
		mc.NMs = append(mc.NMs, nm)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			nm.Shutdown(ctx)
		})
	}
	cenv, err := actor.NewEnv("client", nil, actor.WithTransport(mc.Net.ClientTransport()), actor.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cenv.Shutdown(context.Background()) })
	mc.Client = rmclient.New(cenv, mc.RM.Address())
	return mc
}

// SubmitShell submits an "application" whose AM container runs script.
func (mc *MemCluster) SubmitShell(script string, am cluster.Resource) *rmclient.AppHandle {
	mc.T.Helper()
	k, v, _ := strings.Cut(mc.Marker, "=")
	h, err := mc.Client.Submit(testutil.Context(mc.T, 10*time.Second), rmclient.Submission{Name: "shell", AMResource: am,
		AMCommand: []string{"/bin/sh", "-c", script}, AMEnv: map[string]string{k: v},
		Conf: map[string]string{"spark.app.name": "shell", "spark.test": "yes"}, ReportInterval: 20 * time.Millisecond})
	if err != nil {
		mc.T.Fatal(err)
	}
	return h
}

// AMLogDir waits for h's AM log folder and returns its path.
func (mc *MemCluster) AMLogDir(h *rmclient.AppHandle) string {
	mc.T.Helper()
	var dir string
	testutil.Eventually(mc.T, 10*time.Second, "the AM's log folder", func() bool {
		r, err := h.Poll(context.Background())
		if err != nil || r.AMLogDir == "" {
			return false
		}
		dir = r.AMLogDir[strings.Index(r.AMLogDir, ":/")+1:]
		return true
	})
	return dir
}
