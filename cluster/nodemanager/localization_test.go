package nodemanager_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// testProgram is the user's program of these tests: it prints its
// arguments and the --files file, then waits to be stopped.
const testProgram = `#!/bin/sh
echo "program args: $*"
cat data.txt
echo
echo ready
exec sleep 60
`

// programCommand starts the user's program. Should the node manager run
// its own executable instead (this test binary), the flag makes it run no
// test.
var programCommand = []string{"sparkrpc", "-test.run=^$", "am"}

// writeTestFile writes content to a new file name in dir and returns its
// path.
func writeTestFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// submitStaged submits an application of mc whose AM runs command, with
// program and files staged.
func submitStaged(t *testing.T, mc *clustertest.MemCluster, program string, files []string, command ...string) *rmclient.AppHandle {
	t.Helper()
	k, v, _ := strings.Cut(mc.Marker, "=")
	h, err := mc.Client.Submit(testutil.Context(t, 30*time.Second), rmclient.Submission{Name: "staged", AMResource: cluster.Resource{MemoryMB: 256, Cores: 1},
		AMCommand: command, AMEnv: map[string]string{k: v}, Program: program, Files: files, ReportInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// checkMode fails t unless path (not followed) has mode want.
func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s: mode %o, want %o", path, got, want)
	}
}

// checkLink fails t unless link, in a container's working folder, points
// to the application's cached copy of content, with mode.
func checkLink(t *testing.T, link, appDir, content string, mode os.FileMode) {
	t.Helper()
	target, err := os.Readlink(link)
	if err != nil {
		t.Fatalf("%s: %v", link, err)
	}
	if want := filepath.Join(appDir, "filecache", sha256Hex([]byte(content))); target != want {
		t.Errorf("%s -> %s, want %s", link, target, want)
	}
	if b, err := os.ReadFile(link); err != nil || string(b) != content {
		t.Errorf("%s holds %q, %v", link, b, err)
	}
	checkMode(t, target, mode)
}

// The AM container runs the staged program in place of "sparkrpc", with the
// --files file beside it: both linked from the node's cache of the
// application (program 0500, file 0400, folders 0700), staged 0600 in a
// 0700 folder, and removed with the application.
func TestContainerRunsTheLocalizedProgramWithItsFiles(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	src := t.TempDir()
	program := writeTestFile(t, src, "myprogram", testProgram)
	data := writeTestFile(t, src, "data.txt", "hello from --files")
	h := submitStaged(t, mc, program, []string{data}, programCommand...)
	dir := mc.AMLogDir(h)
	testutil.Eventually(t, 10*time.Second, "the program to start", func() bool { return strings.Contains(readFile(t, filepath.Join(dir, "stdout")), "ready") })
	if out := readFile(t, filepath.Join(dir, "stdout")); !strings.Contains(out, "program args: -test.run=^$ am\nhello from --files\n") {
		t.Fatalf("the program's stdout:\n%s", out)
	}
	r := h.Last()
	appDir := filepath.Join(mc.NMs[0].Dir(), "apps", h.AppID())
	work := filepath.Join(appDir, r.AMContainerID)
	checkLink(t, filepath.Join(work, cluster.AppResourceName), appDir, testProgram, 0o500)
	checkLink(t, filepath.Join(work, "data.txt"), appDir, "hello from --files", 0o400)
	for _, d := range []string{appDir, filepath.Join(appDir, "filecache"), work} {
		checkMode(t, d, 0o700)
	}
	staging := filepath.Join(mc.Staging, h.AppID())
	checkMode(t, staging, 0o700)
	for _, name := range []string{cluster.AppResourceName, "data.txt", cluster.StagingConfFile} {
		checkMode(t, filepath.Join(staging, name), 0o600)
	}

	if err := h.Kill(context.Background()); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the application's folder and cache to be removed", func() bool {
		_, err := os.Stat(appDir)
		return errors.Is(err, os.ErrNotExist)
	})
	testutil.Eventually(t, 10*time.Second, "the staging folder to be removed", func() bool {
		_, err := os.Stat(staging)
		return errors.Is(err, os.ErrNotExist)
	})
}

// asAM is the test acting as the application master of appID, from an env
// of its own: it registers, and has executors started.
type asAM struct {
	t     *testing.T
	appID string
	rm    *actor.Ref
}

func newAsAM(t *testing.T, mc *clustertest.MemCluster, appID string) *asAM {
	t.Helper()
	env, err := actor.NewEnv("am", nil, actor.WithTransport(mc.Net.ClientTransport()), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Shutdown(context.Background()) })
	am := &asAM{t: t, appID: appID, rm: env.RemoteRef(mc.RM.Address(), cluster.ResourceManagerEndpointName)}
	if _, err := actor.AskAs[*messages.AmRegisterResponse](testutil.Context(t, 10*time.Second), am.rm,
		&messages.AmRegister{AppId: appID, Host: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	return am
}

// allocate asks for n containers and returns them.
func (am *asAM) allocate(n int, res cluster.Resource) []*messages.RmContainer {
	am.t.Helper()
	resp, err := actor.AskAs[*messages.AmAllocateResponse](testutil.Context(am.t, 10*time.Second), am.rm,
		&messages.AmAllocate{AppId: am.appID, NumPending: int32(n), Resource: res.Proto()})
	if err != nil || len(resp.GetAllocated()) != n {
		am.t.Fatalf("allocation of %d containers: %v, %v", n, resp, err)
	}
	return resp.GetAllocated()
}

// start starts command in each of containers at once, as an AM asks for
// executors: without resources, which the resource manager adds.
func (am *asAM) start(containers []*messages.RmContainer, command ...string) {
	am.t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(containers))
	for _, c := range containers {
		wg.Go(func() {
			_, err := actor.AskAs[*messages.NmStartContainerResponse](testutil.Context(am.t, 10*time.Second), am.rm,
				&messages.AmStartContainer{AppId: am.appID, ContainerId: c.GetContainerId(), LaunchContext: &messages.RmLaunchContext{Command: command}})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			am.t.Fatal(err)
		}
	}
}

// Executors get the application's resources without the AM naming them,
// and the node fetches each resource once for all of the application's
// containers.
func TestExecutorsShareTheApplicationsResources(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 4})
	src := t.TempDir()
	program := writeTestFile(t, src, "myprogram", testProgram)
	data := writeTestFile(t, src, "data.txt", "hello from --files")
	h := submitStaged(t, mc, program, []string{data}, programCommand...)
	dir := mc.AMLogDir(h)
	testutil.Eventually(t, 10*time.Second, "the AM to start", func() bool { return strings.Contains(readFile(t, filepath.Join(dir, "stdout")), "ready") })
	am := newAsAM(t, mc, h.AppID())
	containers := am.allocate(3, cluster.Resource{MemoryMB: 128, Cores: 1})
	am.start(containers, "sparkrpc", "-test.run=^$", "executor")
	for _, c := range containers {
		out := filepath.Join(mc.NMs[0].Dir(), "logs", h.AppID(), c.GetContainerId(), "stdout")
		testutil.Eventually(t, 10*time.Second, "executor "+c.GetContainerId()+" to start", func() bool {
			return strings.Contains(readFile(t, out), "program args: -test.run=^$ executor\nhello from --files\nready")
		})
	}
	m := testutil.Scrape(t, mc.NMs[0].MetricsHandler())
	if n, _ := m.Value("sparkrpc_nm_localized_resources_total"); n != 2 {
		t.Errorf("the node fetched %v resources for 4 containers of one application, want 2", n)
	}
	if n, _ := m.Value("sparkrpc_nm_localized_bytes_total"); n != float64(len(testProgram)+len("hello from --files")) {
		t.Errorf("the node fetched %v bytes", n)
	}
	if err := h.Kill(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A staged file changed after it was committed, or gone, fails the
// container that needs it before it starts: the application's report
// names the resource and both digests (or the missing file), and the AM
// container's exit status is -1000.
func TestResourceChangedAfterStagingFailsTheContainer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spoil  func(path string) error
		expect func(staged, spoiled string) []string
	}{
		{"tampered", func(path string) error {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt([]byte("J"), 0)
			return err
		}, func(staged, spoiled string) []string {
			return []string{`"data.txt" (FILE)`, "sha256 " + sha256Hex([]byte(spoiled)), "expected 18 bytes with sha256 " + sha256Hex([]byte(staged))}
		}},
		{"missing", os.Remove, func(string, string) []string {
			return []string{`"data.txt" (FILE)`, "resource not staged"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
			const content = "hello from --files"
			data := writeTestFile(t, t.TempDir(), "data.txt", content)
			client, rm := newClient(t, mc)
			ctx := testutil.Context(t, 30*time.Second)
			id, _, err := client.NewApplication(ctx)
			if err != nil {
				t.Fatal(err)
			}
			res, err := client.Stage(ctx, id, rmclient.Resource{Name: "data.txt", Kind: messages.RmResourceKind_RM_RESOURCE_KIND_FILE, Path: data})
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.spoil(filepath.Join(mc.Staging, id, "data.txt")); err != nil {
				t.Fatal(err)
			}
			k, v, _ := strings.Cut(mc.Marker, "=")
			if _, err := actor.AskAs[*messages.RmSubmitApplicationResponse](ctx, rm, &messages.RmSubmitApplication{AppId: id, User: client.User(),
				AmResource: &messages.RmResource{MemoryMb: 256, Cores: 1}, AmLaunchContext: &messages.RmLaunchContext{
					Command: []string{"/bin/sh", "-c", "echo started"}, Environment: map[string]string{k: v}, Resources: []*messages.RmLocalResource{res}}}); err != nil {
				t.Fatal(err)
			}
			r, err := client.Handle(id, 20*time.Millisecond).Wait(ctx)
			if !errors.Is(err, cluster.ErrAppFailed) || r.State != cluster.StateFailed {
				t.Fatalf("report %+v, %v", r, err)
			}
			for _, want := range append(tc.expect(content, "J"+content[1:]), "exitCode: -1000", "resource localization failed: \"data.txt\" (FILE)") {
				if !strings.Contains(r.Diagnostics, want) {
					t.Errorf("diagnostics lack %q:\n%s", want, r.Diagnostics)
				}
			}
			appDir := filepath.Join(mc.NMs[0].Dir(), "apps", id)
			testutil.Eventually(t, 10*time.Second, "the failed container's folders to be removed", func() bool {
				_, err := os.Stat(appDir)
				return errors.Is(err, os.ErrNotExist)
			})
		})
	}
}

// newClient returns a client of mc's resource manager on an env of its
// own, and a ref to the resource manager from that env.
func newClient(t *testing.T, mc *clustertest.MemCluster) (*rmclient.Client, *actor.Ref) {
	t.Helper()
	env, err := actor.NewEnv("submitter", nil, actor.WithTransport(mc.Net.ClientTransport()), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Shutdown(context.Background()) })
	return rmclient.New(env, mc.RM.Address()), env.RemoteRef(mc.RM.Address(), cluster.ResourceManagerEndpointName)
}

// Staging a 100 MiB file and localizing it for a container keeps the live
// heap of the whole cluster (client, resource manager, node manager, all
// in this process) within a few chunks, not the file's size.
func TestStagingAndLocalizationMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 100 MiB")
	}
	const size = 100 << 20
	big := filepath.Join(t.TempDir(), "big.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.NewChaCha8([32]byte{7})
	buf := make([]byte, 1<<20)
	for range size >> 20 {
		rng.Read(buf)
		if _, err := f.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	buf = nil
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	base, baseAlloc := liveHeap(), testutil.LiveHeap()
	var peak, peakAlloc int64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, liveHeap())
			peakAlloc = max(peakAlloc, testutil.LiveHeap())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	start := time.Now()
	h := submitStaged(t, mc, "", []string{big}, "/bin/sh", "-c", "wc -c < big.bin; exec sleep 60")
	dir := mc.AMLogDir(h)
	testutil.Eventually(t, 60*time.Second, "the container to see the localized file", func() bool {
		return strings.TrimSpace(readFile(t, filepath.Join(dir, "stdout"))) == "104857600"
	})
	took := time.Since(start)
	close(stop)
	<-sampled
	growth := peak - base
	t.Logf("staged and localized %d MiB in %s; live heap %.1f MiB before, at most %.1f MiB during (+%.1f MiB); "+
		"heap in use after a collection (testutil.LiveHeap, which counts what others allocate meanwhile) +%.1f MiB",
		size>>20, took.Round(time.Millisecond), float64(base)/(1<<20), float64(peak)/(1<<20), float64(growth)/(1<<20),
		float64(peakAlloc-baseAlloc)/(1<<20))
	if growth >= 16<<20 {
		t.Errorf("the live heap grew by %.1f MiB while staging and localizing %d MiB, want less than 16 MiB", float64(growth)/(1<<20), size>>20)
	}
	if err := h.Kill(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// liveHeap returns the bytes the heap held live at the end of a fresh
// collection's marking: unlike testutil.LiveHeap, it does not count what
// other goroutines allocate between the collection and the reading.
func liveHeap() int64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// A submission without a program or files sends no staging message and
// hands its containers no resources: nothing changes.
func TestSubmissionWithoutResourcesStagesNothing(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	h := mc.SubmitShell(`echo ok`, cluster.Resource{MemoryMB: 256, Cores: 1})
	if _, err := h.Wait(testutil.Context(t, 10*time.Second)); !errors.Is(err, cluster.ErrAppFailed) {
		t.Fatalf("an AM that exits without unregistering: %v", err)
	}
	m := testutil.Scrape(t, mc.RM.MetricsHandler())
	if n, _ := m.Value("sparkrpc_messages_received_total", "type", "sparkrpc.messages.RmSubmitApplication"); n != 1 {
		t.Fatalf("%v submissions counted", n)
	}
	for _, typ := range []string{"RmStageChunk", "RmStageCommit", "RmFetchResource"} {
		if n, ok := m.Value("sparkrpc_messages_received_total", "type", "sparkrpc.messages."+typ); ok {
			t.Errorf("%v %s received", n, typ)
		}
	}
	if _, err := os.Stat(filepath.Join(mc.NMs[0].Dir(), "apps", h.AppID())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the application's folder is left: %v", err)
	}
}
