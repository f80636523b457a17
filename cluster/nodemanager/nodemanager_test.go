package nodemanager_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, _ := os.ReadFile(path)
	return string(b)
}

func TestContainerEnvironmentLogsAndKill(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	h := mc.SubmitShell(`echo "mem=$GOMEMLIMIT id=$CONTAINER_ID"; echo oops >&2; cat __spark_conf__.properties; sleep 60 & sleep 60`,
		cluster.Resource{MemoryMB: 512, Cores: 1})
	dir := mc.AMLogDir(h)
	// The script writes stderr before the configuration.
	testutil.Eventually(t, 10*time.Second, "the AM's output", func() bool {
		return strings.Contains(readFile(t, filepath.Join(dir, "stdout")), "spark.test=yes")
	})
	out := readFile(t, filepath.Join(dir, "stdout"))
	if !regexp.MustCompile(`mem=512MiB id=container_\d+_0001_01_000001`).MatchString(out) || !strings.Contains(out, "spark.app.name=shell") {
		t.Fatalf("container stdout:\n%s", out)
	}
	if got := readFile(t, filepath.Join(dir, "stderr")); got != "oops\n" {
		t.Fatalf("container stderr %q", got)
	}
	staging := filepath.Join(mc.Staging, h.AppID(), cluster.StagingConfFile)
	if _, err := os.Stat(staging); err != nil {
		t.Fatalf("staging file: %v", err)
	}
	// The shell starts its two sleeps after writing its output.
	testutil.Eventually(t, 10*time.Second, "3 container processes (sh and two sleeps)", func() bool { return len(clustertest.MarkedProcesses(mc.Marker)) == 3 })
	if err := h.Kill(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := h.Wait(testutil.Context(t, 10*time.Second))
	var afe *cluster.AppFailedError
	if !errors.As(err, &afe) || r.State != cluster.StateKilled || r.FinalStatus != cluster.FinalKilled {
		t.Fatalf("after kill: %+v, %v", r, err)
	}
	testutil.Eventually(t, 10*time.Second, "the container's processes to be gone", func() bool { return len(clustertest.MarkedProcesses(mc.Marker)) == 0 })
	testutil.Eventually(t, 10*time.Second, "the staging folder to be removed", func() bool {
		_, err := os.Stat(filepath.Dir(staging))
		return os.IsNotExist(err)
	})
	testutil.Eventually(t, 10*time.Second, "the node to be free", func() bool {
		nodes, err := mc.Client.Nodes(context.Background())
		return err == nil && nodes[0].GetNumContainers() == 0 && nodes[0].GetUsed().GetMemoryMb() == 0
	})
}

func TestAMExitFailsApplication(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	h := mc.SubmitShell(`echo "Timed out waiting for SparkContext." >&2; exit 13`, cluster.Resource{MemoryMB: 256, Cores: 1})
	r, err := h.Wait(testutil.Context(t, 10*time.Second))
	if !errors.Is(err, cluster.ErrAppFailed) || r.State != cluster.StateFailed || r.FinalStatus != cluster.FinalFailed {
		t.Fatalf("report %+v, err %v", r, err)
	}
	for _, want := range []string{"exited with exitCode: 13", "Timed out waiting for SparkContext."} {
		if !strings.Contains(r.Diagnostics, want) {
			t.Fatalf("diagnostics %q lack %q", r.Diagnostics, want)
		}
	}
	testutil.Eventually(t, 10*time.Second, "the staging folder to be removed", func() bool {
		_, err := os.Stat(filepath.Join(mc.Staging, h.AppID()))
		return os.IsNotExist(err)
	})
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	// The shell and its child ignore SIGTERM: only SIGKILL stops them.
	h := mc.SubmitShell(`trap "" TERM; echo ready; sleep 60`, cluster.Resource{MemoryMB: 256, Cores: 1})
	dir := mc.AMLogDir(h)
	testutil.Eventually(t, 10*time.Second, "the container to start", func() bool {
		return strings.Contains(readFile(t, filepath.Join(dir, "stdout")), "ready") && len(clustertest.MarkedProcesses(mc.Marker)) == 2
	})
	if _, err := mc.Client.Kill(context.Background(), h.AppID(), "stop it"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "SIGKILL to stop the container", func() bool { return len(clustertest.MarkedProcesses(mc.Marker)) == 0 })
}

func TestNodeManagerShutdownStopsContainers(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	h := mc.SubmitShell(`sleep 60 & sleep 60`, cluster.Resource{MemoryMB: 256, Cores: 1})
	testutil.Eventually(t, 10*time.Second, "the container to start", func() bool {
		return len(mc.NMs[0].Containers()) == 1 && len(clustertest.MarkedProcesses(mc.Marker)) >= 2
	})
	if err := mc.NMs[0].Shutdown(testutil.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if n := len(clustertest.MarkedProcesses(mc.Marker)); n != 0 {
		t.Fatalf("%d container processes left after the node manager's shutdown", n)
	}
	r, err := h.Wait(testutil.Context(t, 10*time.Second))
	if err == nil || r.State != cluster.StateFailed || !strings.Contains(r.Diagnostics, "exitCode: -106") {
		t.Fatalf("report %+v, err %v", r, err)
	}
}

func TestSubmitRefusesAMAboveLargestNode(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2}, cluster.Resource{MemoryMB: 2048, Cores: 1})
	_, err := mc.Client.Submit(testutil.Context(t, 10*time.Second), rmclient.Submission{AMResource: cluster.Resource{MemoryMB: 4096, Cores: 1},
		AMCommand: []string{"/bin/true"}})
	var rte *cluster.ResourceTooLargeError
	if !errors.As(err, &rte) || !errors.Is(err, cluster.ErrResourceTooLarge) ||
		err.Error() != "Required AM memory (4096 MB) is above the max threshold (2048 MB) of this cluster! Please check the memory of the node managers (nodemanager --memory) or lower the requested memory." {
		t.Fatalf("err = %v", err)
	}
}

type stateRecorder struct {
	mu     sync.Mutex
	states []cluster.AppState
}

func (r *stateRecorder) StateChanged(rep *rmclient.AppReport) {
	r.mu.Lock()
	r.states = append(r.states, rep.State)
	r.mu.Unlock()
}

func (r *stateRecorder) InfoChanged(*rmclient.AppReport) {}

func TestHandleListenerSeesStates(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	h := mc.SubmitShell(`sleep 60`, cluster.Resource{MemoryMB: 256, Cores: 1})
	rec := &stateRecorder{}
	h.AddListener(rec)
	if _, err := h.WaitFor(testutil.Context(t, 10*time.Second), func(r *rmclient.AppReport) bool { return r.State == cluster.StateAccepted }); err != nil {
		t.Fatal(err)
	}
	if err := h.Kill(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Wait(testutil.Context(t, 10*time.Second)); !errors.Is(err, cluster.ErrAppFailed) {
		t.Fatalf("Wait = %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if fmt.Sprint(rec.states) != "[ACCEPTED KILLED]" || h.State() != cluster.StateKilled {
		t.Fatalf("states seen %v, last %s", rec.states, h.State())
	}
}

func TestRefusedSubmissionRemovesStaging(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	_, err := mc.Client.Submit(testutil.Context(t, 10*time.Second), rmclient.Submission{Queue: "nope",
		AMResource: cluster.Resource{MemoryMB: 256, Cores: 1}, AMCommand: []string{"/bin/true"}})
	if err == nil || !strings.Contains(err.Error(), "unknown queue: nope") {
		t.Fatalf("err = %v", err)
	}
	ents, _ := os.ReadDir(mc.Staging)
	if len(ents) != 0 {
		t.Fatalf("staging folders left: %v", ents)
	}
}

// A container whose process exits leaves nothing behind: the processes it
// started in the background are stopped with it.
func TestContainerExitStopsItsChildren(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	h := mc.SubmitShell(`sleep 60 & echo started; exit 3`, cluster.Resource{MemoryMB: 256, Cores: 1})
	r, err := h.Wait(testutil.Context(t, 10*time.Second))
	if !errors.Is(err, cluster.ErrAppFailed) || r.State != cluster.StateFailed || !strings.Contains(r.Diagnostics, "exitCode: 3") {
		t.Fatalf("report %+v, err %v", r, err)
	}
	testutil.Eventually(t, 10*time.Second, "the container's background process to be gone", func() bool { return len(clustertest.MarkedProcesses(mc.Marker)) == 0 })
}

// Application ids are application_<the resource manager's start, Unix ms>_<sequence>.
func TestApplicationIDs(t *testing.T) {
	before := time.Now().UnixMilli()
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	after := time.Now().UnixMilli()
	ts := mc.RM.ClusterTimestamp()
	if ts < before || ts > after {
		t.Fatalf("cluster timestamp %d, want the start time in [%d, %d]", ts, before, after)
	}
	for seq := 1; seq <= 2; seq++ {
		id, _, err := mc.Client.NewApplication(testutil.Context(t, 10*time.Second))
		if err != nil || id != cluster.AppID(ts, seq) || !regexp.MustCompile(`^application_\d{13}_000\d$`).MatchString(id) {
			t.Fatalf("application %d: id %q, %v", seq, id, err)
		}
	}
}

// Stopping a container sends SIGTERM to every process of it, not only to
// its first one, so that each can end cleanly.
func TestStopSignalsEveryProcessOfTheContainer(t *testing.T) {
	// A grace long enough for the child to end before SIGKILL, however
	// busy the machine.
	mc := clustertest.NewMemClusterGrace(t, 5*time.Second, cluster.Resource{MemoryMB: 1024, Cores: 2})
	// The first process ignores SIGTERM and waits for its child, which
	// ends cleanly on SIGTERM.
	h := mc.SubmitShell(`sh -c 'trap "echo child-terminated; exit 0" TERM; echo child-ready; while :; do sleep 0.05; done' &
trap "" TERM; echo parent-ready; wait`, cluster.Resource{MemoryMB: 256, Cores: 1})
	dir := mc.AMLogDir(h)
	testutil.Eventually(t, 10*time.Second, "the container to start", func() bool {
		out := readFile(t, filepath.Join(dir, "stdout"))
		return strings.Contains(out, "child-ready") && strings.Contains(out, "parent-ready")
	})
	if err := h.Kill(context.Background()); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the container's processes to be gone", func() bool { return len(clustertest.MarkedProcesses(mc.Marker)) == 0 })
	if out := readFile(t, filepath.Join(dir, "stdout")); !strings.Contains(out, "child-terminated") {
		t.Fatalf("the child did not get SIGTERM; stdout:\n%s", out)
	}
}

// A node manager whose resource manager does not answer retries, logs each
// attempt, and gives up with ErrRegistrationFailed after RegisterTimeout or
// as soon as its ctx ends; it never hangs.
func TestNodeManagerRegistrationGivesUp(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		cancel  bool
		want    string
	}{
		// The second attempt comes 160–240 ms in; the timeout leaves a loaded
		// machine more than a second of margin before it.
		{"timeout", 2 * time.Second, false, "did not answer within 2s"},
		{"ctx ends", time.Hour, true, "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			net := actor.NewMemNetwork()
			var logs syncBuf
			log := zerolog.New(&logs)
			env, err := actor.NewEnv("nm", nil, actor.WithTransport(net.Transport("127.0.0.1", 100)), actor.WithLogger(zerolog.Nop()))
			if err != nil {
				t.Fatal(err)
			}
			defer env.Shutdown(context.Background())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := nodemanager.Start(ctx, env, nodemanager.Config{ResourceManager: actor.NewRpcAddress("127.0.0.1", 1),
					Capability: cluster.Resource{MemoryMB: 512, Cores: 1}, Dir: t.TempDir(), RegisterTimeout: tc.timeout, Logger: &log})
				done <- err
			}()
			testutil.Eventually(t, 10*time.Second, "two logged attempts", func() bool { return strings.Contains(logs.String(), `"attempt":2`) })
			if tc.cancel {
				cancel()
			}
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Start did not return")
			}
			if !errors.Is(err, cluster.ErrRegistrationFailed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrRegistrationFailed with %q", err, tc.want)
			}
			if n := strings.Count(logs.String(), "cannot register with the resource manager; retrying"); n < 2 {
				t.Errorf("%d attempts logged:\n%s", n, logs.String())
			}
		})
	}
}

type syncBuf = testutil.SyncBuffer

// A container whose program cannot start leaves no working folder on the
// node (the one a localized container's failure removes already). Before,
// its folder, with the files of its launch context, stayed until the node
// manager's folder was cleaned.
func TestFailedLaunchLeavesNoWorkingFolder(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	h, err := mc.Client.Submit(testutil.Context(t, 10*time.Second), rmclient.Submission{
		AMResource: cluster.Resource{MemoryMB: 256, Cores: 1}, AMCommand: []string{"/nonexistent/sparkrpc-test-program"},
		ReportInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r, err := h.Wait(testutil.Context(t, 10*time.Second))
	if err == nil || !r.State.Terminal() {
		t.Fatalf("an application whose master cannot start: report %+v, %v", r, err)
	}
	if left, _ := filepath.Glob(filepath.Join(mc.NMs[0].Dir(), "apps", h.AppID(), "container_*")); len(left) != 0 {
		t.Fatalf("working folders left by a failed launch: %v (diagnostics %q)", left, r.Diagnostics)
	}
}
