package executorpods

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	corev1 "k8s.io/api/core/v1"
)

// standInExecutor is the command of the allocator test's pods: executor 1
// fails with exit code 3, the others run until their pod is deleted.
const standInExecutor = `#!/bin/sh
[ "$SPARK_EXECUTOR_ID" = 1 ] && exit 3
exec sleep 600
`

// TestKubernetesAllocatorIO drives the allocator alone (no driver) on the
// real control plane: pods are created from the informer's snapshot, a
// failed pod becomes a loss with its exit code and is replaced, a killed
// executor's pod is deleted and not replaced, and Stop deletes what is
// left.
func TestKubernetesAllocatorIO(t *testing.T) {
	c := needCluster(t)
	exe := filepath.Join(t.TempDir(), "stand-in-executor")
	if err := os.WriteFile(exe, []byte(standInExecutor), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.AppID = kubeconf.NewAppID()
	cfg.PodNamePrefix = "alloc" + cfg.AppID[len(cfg.AppID)-8:]
	cfg.NumExecutors = 2
	cfg.BatchDelay = 100 * time.Millisecond
	cfg.Executable = exe
	cfg.ExecutorMemoryMiB, cfg.ExecutorOverheadMiB, cfg.ExecutorRequestCores = 16, 16, "10m"
	var mu sync.Mutex
	lost := map[string]string{}
	client, err := kubeclient.New(actor.NewConf(), kubeclient.Options{Server: controlPlane.Server()})
	if err != nil {
		t.Fatal(err)
	}
	a := NewAllocator(cfg, client, Options{Logger: zerolog.Nop(),
		OnLost: func(id, reason string) {
			mu.Lock()
			lost[id] = reason
			mu.Unlock()
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := a.Start(ctx, "spark://CoarseGrainedScheduler@127.0.0.1:1"); err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	name := func(id string) string { return cfg.PodNamePrefix + "-exec-" + id }
	// names are the executor pods not being deleted: the node removes a
	// deleted pod from the API only after its grace period.
	names := func() map[string]*corev1.Pod {
		m := map[string]*corev1.Pod{}
		for _, p := range executorPods(t, c, cfg.AppID) {
			if p.DeletionTimestamp == nil {
				m[p.Name] = &p
			}
		}
		return m
	}
	testutil.Eventually(t, time.Minute, "2 executor pods", func() bool { return len(names()) >= 2 })
	p2 := names()[name("2")]
	if p2 == nil || p2.Labels[kubeconf.LabelRole] != kubeconf.RoleExecutor || p2.Labels[kubeconf.LabelAppSelector] != cfg.AppID || p2.Labels[kubeconf.LabelExecutorID] != "2" {
		t.Fatalf("pods %v", names())
	}
	// Pod 1's process exits with code 3.
	testutil.Eventually(t, time.Minute, "the loss of executor 1", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(lost["1"], "exit code 3")
	})
	r, err := a.ExecutorLossReason(ctx, "1")
	if err != nil || !strings.Contains(r, "exit code 3") {
		t.Fatalf("ExecutorLossReason = %q, %v", r, err)
	}
	testutil.Eventually(t, time.Minute, "pod 1 deleted and pod 3 replacing it", func() bool {
		m := names()
		return m[name("1")] == nil && m[name("3")] != nil && m[name("2")] != nil
	})
	if err := a.KillExecutors(ctx, []string{"2"}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, time.Minute, "pod 2 deleted, not replaced", func() bool {
		m := names()
		return len(m) == 1 && m[name("3")] != nil
	})
	if _, _, wanted := a.Counts(); wanted != 1 {
		t.Fatalf("wanted %d after a kill", wanted)
	}
	mu.Lock()
	if r, ok := lost["2"]; ok && strings.Contains(r, "exit code 3") {
		t.Errorf("killed executor 2 lost as %q", r)
	}
	mu.Unlock()
	sctx, scancel := context.WithTimeout(ctx, time.Minute)
	defer scancel()
	if err := a.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	if left := executorPods(t, c, cfg.AppID); len(left) != 0 {
		t.Fatalf("%d pods left after Stop", len(left))
	}
}
