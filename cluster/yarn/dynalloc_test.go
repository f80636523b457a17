package yarn

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/examples"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// dynallocApp is an application (its driver runs in the test process, in
// client mode) that runs SparkPi with its arguments, then keeps its driver
// up until dynamic allocation has released every executor, and prints the
// most executors it had at once.
const dynallocApp = "yarn.DynamicAllocationTest"

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
		if err := d.WaitForExecutorsGone(ctx, executorIDs(d)...); err != nil {
			return fmt.Errorf("the executors were not released: %w (left: %d)", err, len(d.Executors()))
		}
		mu.Lock()
		defer mu.Unlock()
		sc.Printf("peak executors: %d, left: %d\n", peak, len(d.Executors()))
		return nil
	})
}

// executorIDs returns the ids of d's executors.
func executorIDs(d *endpoints.Driver) []string {
	var ids []string
	for _, ex := range d.Executors() {
		ids = append(ids, ex.ID)
	}
	return ids
}

// With dynamic allocation (minExecutors 0, maxExecutors 4, short timeouts)
// a job of 200 slow tasks on a local cluster grows to 4 executors and,
// once done and idle past the timeout, back to 0, its driver still up.
func TestDynamicAllocationGrowsAndShrinks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sparkrpc and runs an application in processes")
	}
	program := sparkrpcBinary(t)
	marker := fmt.Sprintf("%d-%d", os.Getpid(), markerSeq.Add(1))
	t.Setenv(markerKey, marker)
	t.Cleanup(func() {
		testutil.Eventually(t, 10*time.Second, "no container process left", func() bool {
			return len(clustertest.MarkedProcesses(markerKey+"="+marker)) == 0
		})
	})
	var logs testutil.SyncBuffer
	log := zerolog.New(&logs).Level(zerolog.InfoLevel)
	conf := actor.NewConf().Set(cluster.KeyDeployMode, "client").Set(cluster.KeyContainerEnvWhitelist, markerKey).
		Set(cluster.KeyLocalClusterDir, t.TempDir()).
		Set(cluster.KeyExecutorMemory, "256m").Set(cluster.KeyAMMemory, "256m").
		Set("spark.examples.sparkPi.taskDelay", "100ms").
		Set(endpoints.KeyDynamicAllocationEnabled, "true").
		Set(endpoints.KeyDynamicAllocationMinExecutors, "0").
		Set(endpoints.KeyDynamicAllocationMaxExecutors, "4").
		Set(endpoints.KeyDynamicAllocationExecutorIdleTimeout, "2s").
		Set(endpoints.KeyDynamicAllocationSchedulerBacklogTimeout, "500ms").
		Set(endpoints.KeyDynamicAllocationSustainedBacklogTimeout, "500ms")
	// Five one-core workers: the AM's and four executors'.
	m, err := cluster.ParseMaster("local-cluster[5,1,1024]")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr testutil.SyncBuffer
	cfg := cluster.SubmitConfig{Master: m, Class: dynallocApp, Args: []string{"200"}, Conf: conf, Stdout: &stdout, Stderr: &stderr,
		Logger: log, Program: program}
	if err := cluster.Submit(testutil.Context(t, 3*time.Minute), cfg, Manager{}); err != nil {
		t.Fatalf("application: %v\nstderr:\n%s\nlog:\n%s", err, stderr.String(), logs.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "Pi is roughly") || !strings.Contains(out, "peak executors: 4, left: 0") {
		t.Fatalf("the application's output:\n%s\nlog:\n%s", out, logs.String())
	}
	for _, want := range []string{`"decision":"initial","target":0`, `"decision":"add"`, `"target":4`, `"decision":"remove"`} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("no %s decision in the driver's log:\n%s", want, logs.String())
		}
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"decision"`) {
			t.Log(line)
		}
	}
	t.Logf("the application's output:\n%s", out)
}
