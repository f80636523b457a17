package yarn

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	_ "github.com/sparkrpc/sparkrpc/examples" // SparkPi, for the driver in client mode
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// markerKey names the variable whose value marks the processes a test's
// containers started.
const markerKey = "SPARKRPC_YARN_TEST_MARKER"

var markerSeq atomic.Int64

// filesContent is the --files file of these tests.
const filesContent = "shipped with --files\n"

// SparkPi runs on a local cluster and on a resource manager with two node
// managers, in both deploy modes, with the user's program a sparkrpc
// binary built by the test and the node managers' own executable a program
// that fails: every container (AM and executors) runs the staged program,
// and the --files file is in each executor's working folder.
func TestSparkPiRunsTheStagedProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sparkrpc and runs an application in processes")
	}
	program := sparkrpcBinary(t)
	failing, err := exec.LookPath("false")
	if err != nil {
		t.Skip("no false command")
	}
	for _, master := range []string{"local-cluster", "rm"} {
		for _, mode := range []string{"cluster", "client"} {
			t.Run(master+"/"+mode, func(t *testing.T) {
				runStagedSparkPi(t, master, mode, program, failing, false)
			})
		}
	}
	// With spark.authenticate, node managers read the staged resources
	// with the cluster's key.
	t.Run("local-cluster/cluster/authenticate", func(t *testing.T) {
		runStagedSparkPi(t, "local-cluster", "cluster", program, failing, true)
	})
}

// runStagedSparkPi submits SparkPi to a fresh cluster of master's kind in
// mode (with spark.authenticate when auth is set) and checks it ran the
// staged program with the --files file.
func runStagedSparkPi(t *testing.T, master, mode, program, failing string, auth bool) {
	marker := fmt.Sprintf("%d-%d", os.Getpid(), markerSeq.Add(1))
	t.Setenv(markerKey, marker)
	t.Cleanup(func() {
		testutil.Eventually(t, 10*time.Second, "no container process left", func() bool {
			return len(clustertest.MarkedProcesses(markerKey+"="+marker)) == 0
		})
	})
	dir := t.TempDir()
	data := filepath.Join(t.TempDir(), "data.txt")
	if err := os.WriteFile(data, []byte(filesContent), 0o644); err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	conf := actor.NewConf().Set(cluster.KeyDeployMode, mode).Set(cluster.KeyContainerEnvWhitelist, markerKey).
		// Tasks long enough for the test to see the executors' folders.
		Set("spark.examples.sparkPi.taskDelay", "1500ms").Set(cluster.KeyNumExecutors, "2")
	if auth {
		conf.Set("spark.authenticate", "true")
	}
	m, err := cluster.ParseMaster("local-cluster[2,1,512]")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testutil.Context(t, 2*time.Minute)
	if master == "rm" {
		lc, err := StartLocalCluster(ctx, LocalClusterConfig{Workers: 2, WorkerCores: 1, WorkerMemoryMB: 1024,
			AMNode: cluster.Resource{MemoryMB: 1024, Cores: 1}, Dir: dir, Executable: failing, Logger: log, EnvWhitelist: []string{markerKey}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lc.Shutdown(context.Background()) })
		if m, err = cluster.ParseMaster("rm://" + lc.Address().HostPort()); err != nil {
			t.Fatal(err)
		}
		conf.Set(cluster.KeyReportInterval, "200ms").Set(cluster.KeyDriverMemory, "512m").Set(cluster.KeyExecutorMemory, "512m")
	} else {
		conf.Set(cluster.KeyLocalClusterDir, dir)
	}
	var stdout, stderr testutil.SyncBuffer
	cfg := cluster.SubmitConfig{Master: m, Class: "SparkPi", Args: []string{"4"}, Conf: conf, Stdout: &stdout, Stderr: &stderr,
		Logger: log, Executable: failing, Program: program, Files: []string{data}}
	done := make(chan error, 1)
	go func() { done <- cluster.Submit(ctx, cfg, Manager{}) }()
	executors := waitForExecutorFiles(t, dir, done)
	if err := <-done; err != nil {
		t.Fatalf("SparkPi: %v\nstderr:\n%s", err, stderr.String())
	}
	// The driver's output: here in client mode and from an embedded
	// cluster, else in the AM container's log.
	out := stdout.String()
	if logs, _ := filepath.Glob(filepath.Join(dir, "am-node", "logs", "application_*", "container_*", "stdout")); mode == "cluster" && master == "rm" && len(logs) == 1 {
		b, _ := os.ReadFile(logs[0])
		out = string(b)
	}
	if !strings.Contains(out, "Pi is roughly") {
		t.Fatalf("the driver's output:\n%s\nstderr:\n%s", out, stderr.String())
	}
	t.Logf("the --files file was in the working folders of %s", strings.Join(executors, ", "))
}

// waitForExecutorFiles waits until the working folders of executors on
// both worker nodes under dir hold the --files file and the program, and
// returns them; it fails t if the submission ends first.
func waitForExecutorFiles(t *testing.T, dir string, done chan error) []string {
	t.Helper()
	var found []string
	testutil.EventuallyNoError(t, time.Minute, "the executors' working folders", func() error {
		select {
		case err := <-done:
			t.Fatalf("the submission ended before the executors' folders were seen: %v", err)
		default:
		}
		found = found[:0]
		for _, node := range []string{"node1", "node2"} {
			paths, _ := filepath.Glob(filepath.Join(dir, node, "apps", "application_*", "container_*", "data.txt"))
			for _, p := range paths {
				b, err := os.ReadFile(p)
				_, perr := os.Stat(filepath.Join(filepath.Dir(p), cluster.AppResourceName))
				if err == nil && string(b) == filesContent && perr == nil {
					found = append(found, filepath.Base(filepath.Dir(p)))
					break
				}
			}
		}
		if len(found) < 2 {
			return fmt.Errorf("found in %v", found)
		}
		return nil
	})
	return found
}
