package kubernetes

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/executorpods"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/examples"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// dynallocApp runs SparkPi with its arguments, then keeps its driver (in
// the test process, client mode) up until dynamic allocation has released
// every executor and their pods are gone from the API server, and prints
// the most executors it had at once.
const dynallocApp = "KubernetesDynamicAllocationTest"

func init() {
	cluster.RegisterApp(dynallocApp, func(ctx context.Context, sc *cluster.AppContext, args []string) error {
		d, err := sc.Driver(ctx)
		if err != nil {
			return err
		}
		var mu sync.Mutex
		live, peak := 0, 0
		d.AddListener(endpoints.ListenerFunc(func(ev endpoints.Event) {
			mu.Lock()
			defer mu.Unlock()
			switch ev.(type) {
			case endpoints.ExecutorAdded:
				live++
				peak = max(peak, live)
			case endpoints.ExecutorRemoved:
				live--
			}
		}))
		if err := examples.SparkPi(ctx, sc, args); err != nil {
			return err
		}
		var ids []string
		for _, ex := range d.Executors() {
			ids = append(ids, ex.ID)
		}
		if err := d.WaitForExecutorsGone(ctx, ids...); err != nil {
			return fmt.Errorf("the executors were not released: %w (left: %d)", err, len(d.Executors()))
		}
		pods, err := waitNoExecutorPods(ctx, sc.AppID())
		if err != nil {
			return fmt.Errorf("executor pods left with the driver up: %d: %w", pods, err)
		}
		mu.Lock()
		defer mu.Unlock()
		sc.Printf("peak executors: %d, left: %d, executor pods: %d\n", peak, len(d.Executors()), pods)
		return nil
	})
}

// waitNoExecutorPods waits until the API server has no executor pod of
// application appID, and returns how many are left.
func waitNoExecutorPods(ctx context.Context, appID string) (int, error) {
	for {
		list, err := adminClient.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: executorpods.Selector(appID)})
		if err != nil {
			return -1, err
		}
		if len(list.Items) == 0 {
			return 0, nil
		}
		select {
		case <-ctx.Done():
			return len(list.Items), ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// With dynamic allocation (minExecutors 0, maxExecutors 4, short timeouts)
// a job of 200 slow tasks on the control plane grows to 4 executor pods
// and, once done and idle past the timeout, back to none, its driver
// still up.
func TestKubernetesDynamicAllocation(t *testing.T) {
	needCluster(t)
	conf := e2eConf(t, 0).
		Set(kubeconf.KeyExecutorRequestCores, "10m").
		Set(cluster.KeyExecutorMemory, "64m").
		Set(cluster.KeyMinRegisteredRatio, "0").
		Set(cluster.KeyAppID, kubeconf.NewAppID()).
		Set("spark.examples.sparkPi.taskDelay", "100ms").
		Set(endpoints.KeyDynamicAllocationEnabled, "true").
		Set(endpoints.KeyDynamicAllocationMinExecutors, "0").
		Set(endpoints.KeyDynamicAllocationMaxExecutors, "4").
		Set(endpoints.KeyDynamicAllocationExecutorIdleTimeout, "2s").
		Set(endpoints.KeyDynamicAllocationSchedulerBacklogTimeout, "500ms").
		Set(endpoints.KeyDynamicAllocationSustainedBacklogTimeout, "500ms")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stdout, stderr, err := submit(ctx, t, conf, dynallocApp, "200")
	if err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr)
	}
	out := stdout.String()
	if !strings.Contains(out, "Pi is roughly") || !strings.Contains(out, "peak executors: 4, left: 0, executor pods: 0") {
		t.Fatalf("the application's output:\n%s\nlog:\n%s", out, stderr)
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "decision=") {
			t.Log(line)
		}
	}
	for _, want := range []string{"decision=initial", "decision=add", "target=4", "decision=remove"} {
		if !strings.Contains(stderr.String(), want) {
			t.Fatalf("no %s in the driver's log:\n%s", want, stderr)
		}
	}
}
