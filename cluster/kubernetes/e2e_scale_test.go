package kubernetes

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// scaleMilestones are the executor counts whose registration time
// TestKubernetesScale reports.
var scaleMilestones = []int{10, 50, 100}

// scaleResult receives the time from submit to each milestone.
var scaleResult struct {
	mu    sync.Mutex
	start time.Time
	at    map[int]time.Duration
}

func init() {
	cluster.RegisterApp("KubernetesScaleTest", func(ctx context.Context, sc *cluster.AppContext, args []string) error {
		d, err := sc.Driver(ctx)
		if err != nil {
			return err
		}
		for _, n := range scaleMilestones {
			if err := d.WaitForExecutors(ctx, n); err != nil {
				return fmt.Errorf("waiting for %d executors (%d registered): %w", n, len(d.Executors()), err)
			}
			scaleResult.mu.Lock()
			scaleResult.at[n] = time.Since(scaleResult.start)
			scaleResult.mu.Unlock()
		}
		_, err = d.RunJob(ctx, endpoints.NoopTaskName, make([][]byte, 100))
		return err
	})
}

// TestKubernetesScale reports the time from submit to 10, 50 and 100
// executors registered, with Spark's default allocation batches (10 pods
// a second). It asserts no timing.
func TestKubernetesScale(t *testing.T) {
	c := needCluster(t)
	n := scaleMilestones[len(scaleMilestones)-1]
	conf := e2eConf(t, n).
		Set(kubeconf.KeyBatchDelay, "1s").
		Set(kubeconf.KeyExecutorRequestCores, "10m").
		Set(cluster.KeyExecutorMemory, "16m").
		Set(kubeconf.KeyExecutorMemoryOverhead, "16m").
		Set(cluster.KeyMinRegisteredRatio, "0").
		Set(cluster.KeyAppID, kubeconf.NewAppID())
	scaleResult.mu.Lock()
	scaleResult.start, scaleResult.at = time.Now(), map[int]time.Duration{}
	scaleResult.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, stderr, err := submit(ctx, t, conf, "KubernetesScaleTest")
	if err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr)
	}
	scaleResult.mu.Lock()
	defer scaleResult.mu.Unlock()
	for _, m := range scaleMilestones {
		t.Logf("executors registered: %3d after %s", m, scaleResult.at[m].Round(10*time.Millisecond))
	}
	if left := executorPods(t, c, conf.Get(cluster.KeyAppID, "")); len(left) != 0 {
		t.Fatalf("%d executor pods left", len(left))
	}
}
