package main

import (
	"bytes"
	"context"
	encbinary "encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/examples"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

const markerKey = "SPARKRPC_CMD_TEST_MARKER"

var markerSeq atomic.Int64

// newMarker returns an environment marker for the processes a test starts
// (their children inherit it) and checks at the end of the test that none
// of them is left.
func newMarker(t *testing.T) string {
	t.Helper()
	m := fmt.Sprintf("%s=%d-%d", markerKey, os.Getpid(), markerSeq.Add(1))
	t.Cleanup(func() {
		deadline := time.Now().Add(15 * time.Second)
		for {
			left := markedProcesses(m)
			if len(left) == 0 {
				return
			}
			if time.Now().After(deadline) {
				for _, p := range left {
					syscall.Kill(p.pid, syscall.SIGKILL)
				}
				t.Errorf("processes left behind: %v", left)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	return m
}

type procInfo struct {
	pid  int
	args []string
}

func (p procInfo) String() string { return fmt.Sprintf("%d %s", p.pid, strings.Join(p.args, " ")) }

// markedProcesses returns the live processes whose environment holds marker.
func markedProcesses(marker string) []procInfo {
	ents, _ := os.ReadDir("/proc")
	var out []procInfo
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(append([]byte{0}, env...), 0), []byte("\x00"+marker+"\x00")) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				continue
			}
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out = append(out, procInfo{pid: pid, args: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")})
	}
	return out
}

// findProcess returns a marked process whose arguments contain all of parts.
func findProcess(marker string, parts ...string) (procInfo, bool) {
	for _, p := range markedProcesses(marker) {
		joined := " " + strings.Join(p.args, " ") + " "
		ok := true
		for _, part := range parts {
			if !strings.Contains(joined, part) {
				ok = false
			}
		}
		if ok {
			return p, true
		}
	}
	return procInfo{}, false
}

type syncBuffer = testutil.SyncBuffer

// proc is a running sparkrpc command.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
	code           int
}

// start starts the binary with args, marked with marker; the test's
// cleanup kills it if it still runs.
func start(t *testing.T, marker string, args ...string) *proc {
	t.Helper()
	return startIn(t, marker, t.TempDir(), nil, args...)
}

// startIn is start in the working folder dir, with env added to the
// environment.
func startIn(t *testing.T, marker, dir string, env []string, args ...string) *proc {
	t.Helper()
	return startInherited(t, marker, dir, env, nil, args...)
}

// startInherited is startIn with files inherited as file descriptors 3 and
// up.
func startInherited(t *testing.T, marker, dir string, env []string, files []*os.File, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(binary, args...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append(append(os.Environ(), env...), marker)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	p.cmd.Dir = dir
	p.cmd.ExtraFiles = files
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		p.code = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(20 * time.Second):
				p.cmd.Process.Kill()
				<-p.done
			}
		}
	})
	return p
}

// wait waits for p to exit and returns its exit code.
func (p *proc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(d):
		t.Fatalf("%v did not exit within %s\nstdout:\n%s\nstderr:\n%s", p.cmd.Args[1:], d, p.stdout, p.stderr)
		return -1
	}
}

// run runs the binary to completion.
func runBin(t *testing.T, marker string, d time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	p := start(t, marker, args...)
	code = p.wait(t, d)
	return p.stdout.String(), p.stderr.String(), code
}

var piRe = regexp.MustCompile(`(?m)^Pi is roughly (3\.1\d*)$`)

func piOf(t *testing.T, stdout string) string {
	t.Helper()
	m := piRe.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no Pi in the output:\n%s", stdout)
	}
	return m[1]
}

// wantPi returns what SparkPi prints for slices partitions: its tasks are
// seeded with their partition, so the answer does not depend on where they
// ran or how often; here they run in this process.
func wantPi(t *testing.T, slices int) string {
	t.Helper()
	fn, ok := endpoints.LookupTask(examples.SparkPiTask)
	if !ok {
		t.Fatal("SparkPi's task is not registered")
	}
	const samples = 100000 // SparkPi's points per partition
	var inside uint64
	for i := 0; i < slices; i++ {
		payload := make([]byte, 24) // partition, samples, task delay
		encbinary.BigEndian.PutUint64(payload, uint64(i))
		encbinary.BigEndian.PutUint64(payload[8:], samples)
		r, err := fn(context.Background(), endpoints.TaskContext{Partition: i}, payload)
		if err != nil || len(r) != 8 {
			t.Fatalf("SparkPi task %d: %x, %v", i, r, err)
		}
		inside += encbinary.BigEndian.Uint64(r)
	}
	return fmt.Sprint(4.0 * float64(inside) / float64(samples*slices))
}

// checkPi fails unless stdout holds SparkPi's exact answer for slices.
func checkPi(t *testing.T, stdout string, slices int) {
	t.Helper()
	if got, want := piOf(t, stdout), wantPi(t, slices); got != want {
		t.Fatalf("Pi is %s, want %s", got, want)
	}
}

func TestSubmitSparkPiLocal(t *testing.T) {
	marker := newMarker(t)
	stdout, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local[2]", "--class", "SparkPi", "spark-internal", "10")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	checkPi(t, stdout, 10)
}

func TestSubmitSparkPiLocalCluster(t *testing.T) {
	for _, mode := range []string{"cluster", "client"} {
		t.Run(mode, func(t *testing.T) {
			marker := newMarker(t)
			stdout, stderr, code := runBin(t, marker, 2*time.Minute, "submit", "--master", "local-cluster[2,1,512]",
				"--deploy-mode", mode, "--class", "SparkPi", "spark-internal", "10")
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			checkPi(t, stdout, 10)
			for _, want := range []string{"Submitted application application_", "(state: ACCEPTED)", "state: FINISHED", "final status: SUCCEEDED"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
}

func TestSubmitWordCount(t *testing.T) {
	marker := newMarker(t)
	dir := t.TempDir()
	var text strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&text, "the quick brown fox %d\njumps over the lazy dog\n", i%7)
	}
	path := filepath.Join(dir, "words.txt")
	if err := os.WriteFile(path, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local[3]", "--class", "WordCount", "spark-internal", path, "7")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"the: 600\n", "fox: 300\n", "0: 43\n", "Total: 3000 words, 15 distinct\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

func TestSubmitBadInput(t *testing.T) {
	marker := newMarker(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown class", []string{"--master", "local[1]", "--class", "NoSuchApp", "spark-internal"}, `unknown application "NoSuchApp"`},
		{"bad master", []string{"--master", "local[x]", "--class", "SparkPi", "spark-internal"}, `invalid master URL: "local[x]"`},
		{"bad local-cluster", []string{"--master", "local-cluster[0,1,512]", "--class", "SparkPi", "spark-internal"}, "invalid master URL"},
		{"missing primary resource", []string{"--master", "local[1]"}, "missing the primary resource"},
		{"missing app", []string{"--master", "local[1]", "spark-internal"}, "missing application: give its name with --class"},
		{"malformed conf", []string{"--conf", "spark.executor.memory", "--class", "SparkPi", "spark-internal"}, `malformed --conf "spark.executor.memory": expected key=value`},
		{"unknown flag", []string{"--no-such-flag", "--class", "SparkPi", "spark-internal"}, "unknown flag: --no-such-flag"},
		{"kill and status", []string{"--master", "rm://127.0.0.1:1", "--kill", "application_1_0001", "--status", "application_1_0001"}, "--kill and --status cannot be used together"},
		{"bad deploy mode", []string{"--deploy-mode", "remote", "--class", "SparkPi", "spark-internal"}, "--deploy-mode must be client or cluster"},
		{"cluster mode on local", []string{"--master", "local[2]", "--deploy-mode", "cluster", "--class", "SparkPi", "spark-internal"}, "cluster deploy mode is not compatible"},
		{"bad memory", []string{"--executor-memory", "lots", "--class", "SparkPi", "spark-internal"}, `invalid memory "lots" for --executor-memory: give a size of at least 1m, such as 512m or 2g`},
		// Nonsense sizes are refused the same way whatever the master.
		{"zero memory", []string{"--executor-memory", "0", "--class", "SparkPi", "spark-internal"}, `invalid memory "0" for --executor-memory: give a size of at least 1m`},
		{"zero memory on local-cluster", []string{"--master", "local-cluster[2,1,1024]", "--executor-memory", "0", "--class", "SparkPi", "spark-internal"}, `invalid memory "0" for --executor-memory: give a size of at least 1m`},
		{"zero memory on rm", []string{"--master", "rm://127.0.0.1:1", "--executor-memory", "0k", "--class", "SparkPi", "spark-internal"}, `invalid memory "0k" for --executor-memory: give a size of at least 1m`},
		{"zero driver memory in conf", []string{"--conf", "spark.driver.memory=0", "--class", "SparkPi", "spark-internal"}, `invalid memory "0" for spark.driver.memory: give a size of at least 1m`},
		{"negative memory", []string{"--executor-memory", "-1g", "--class", "SparkPi", "spark-internal"}, `invalid memory "-1g" for --executor-memory`},
		{"value flag before --class", []string{"--name", "--class", "--no-such-flag", "--class", "SparkPi", "spark-internal"}, "unknown flag: --no-such-flag"},
		{"bad cores in conf", []string{"--conf", "spark.executor.cores=0", "--class", "SparkPi", "spark-internal"}, `invalid value "0" for spark.executor.cores: give a whole number of at least 1`},
		{"negative executors", []string{"--num-executors", "-1", "--class", "SparkPi", "spark-internal"}, `invalid value "-1" for --num-executors: give a whole number of at least 0`},
		{"application without --class", []string{"--master", "local[1]", "SparkPi", "10"}, "submit [options] --class SparkPi spark-internal 10"},
		{"status without rm", []string{"--master", "local[1]", "--status", "application_1_0001"}, "need a running resource manager"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runBin(t, marker, 30*time.Second, append([]string{"submit"}, tc.args...)...)
			if code != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "usage: sparkrpc submit") {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, stderr, tc.want)
			}
		})
	}
}

func TestSubmitPropertiesAndVerbose(t *testing.T) {
	marker := newMarker(t)
	props := filepath.Join(t.TempDir(), "app.properties")
	if err := os.WriteFile(props, []byte("# comment\nspark.custom.key fromfile\nspark.executor.memory=4g\nspark.app.name: from file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runBin(t, marker, time.Minute, "submit", "--verbose", "--master", "local[1]", "--properties-file", props,
		"--conf", "spark.app.name=from conf", "--executor-memory", "2g", "--class", "SparkPi", "spark-internal", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	checkPi(t, stdout, 2)
	for _, want := range []string{"(spark.custom.key,fromfile)", "(spark.executor.memory,2g)", "(spark.app.name,from conf)", "class                   SparkPi"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	_, stderr, code = runBin(t, marker, time.Minute, "submit", "--properties-file", filepath.Join(t.TempDir(), "missing"), "--class", "SparkPi", "spark-internal")
	if code != 1 || !strings.Contains(stderr, "--properties-file") {
		t.Fatalf("missing properties file: exit %d\n%s", code, stderr)
	}
}

func TestHelp(t *testing.T) {
	marker := newMarker(t)
	for _, sub := range []string{"submit", "resourcemanager", "nodemanager", "executor"} {
		stdout, _, code := runBin(t, marker, 30*time.Second, sub, "--help")
		if code != 0 || !strings.Contains(stdout, "Usage:") || !strings.Contains(stdout, "sparkrpc "+sub) {
			t.Errorf("%s --help: exit %d\n%s", sub, code, stdout)
		}
	}
	for _, args := range [][]string{{"executor", "--cores", "1"}, {"nodemanager"}, {"resourcemanager", "extra"}} {
		_, stderr, code := runBin(t, marker, 30*time.Second, args...)
		if code != 1 || !strings.Contains(stderr, "usage:") {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
	}
	stdout, _, code := runBin(t, marker, 30*time.Second, "submit", "--version")
	if code != 0 || !strings.HasPrefix(stdout, "sparkrpc ") {
		t.Errorf("submit --version: exit %d, %q", code, stdout)
	}
}

func TestAppErrorFailsSubmit(t *testing.T) {
	for _, mode := range []string{"cluster", "client"} {
		t.Run(mode, func(t *testing.T) {
			marker := newMarker(t)
			stdout, stderr, code := runBin(t, marker, 2*time.Minute, "submit", "--master", "local-cluster[2,1,512]", "--deploy-mode", mode,
				"--class", "ErrorApp", "spark-internal", "boom", "at", "work")
			if code != 1 {
				t.Fatalf("exit %d for a failed application, want 1\n%s\n%s", code, stdout, stderr)
			}
			if !regexp.MustCompile(`(?m)^sparkrpc: .*boom at work$`).MatchString(stderr) {
				t.Errorf("submit's error does not give the application's error:\n%s", stderr)
			}
			if !strings.Contains(stderr, "final status: FAILED") {
				t.Errorf("stderr lacks the final status FAILED:\n%s", stderr)
			}
		})
	}
}

func TestAMAboveLargestNodeIsRefused(t *testing.T) {
	marker := newMarker(t)
	t.Run("local-cluster", func(t *testing.T) {
		_, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local-cluster[2,1,512]", "--deploy-mode", "cluster",
			"--driver-memory", "2g", "--class", "SparkPi", "spark-internal")
		if code != 1 || !strings.Contains(stderr, "sparkrpc: Required AM memory (2048 MB) is above the max threshold (512 MB) of this cluster! "+
			"Please give the nodes of local-cluster[2,1,512] more memory (M, in MiB) or lower --driver-memory.") {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
	})
	t.Run("resource manager", func(t *testing.T) {
		c := startRMCluster(t, marker, nil, []string{"--memory", "512m", "--cores", "2"}, []string{"--memory", "1g", "--cores", "1"})
		_, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "rm://"+c.addr, "--deploy-mode", "cluster",
			"--driver-memory", "2g", "--class", "SparkPi", "spark-internal")
		if code != 1 || !strings.Contains(stderr, "sparkrpc: Required AM memory (2048 MB) is above the max threshold (1024 MB) of this cluster! "+
			"Please check the memory of the node managers (nodemanager --memory) or lower the requested memory.") {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		c.stop(t)
	})
	// The AM has a node of its own: a single worker still runs an executor.
	t.Run("one worker runs an executor", func(t *testing.T) {
		_, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local-cluster[1,1,1024]", "--class", "SparkPi", "spark-internal")
		if code != 0 || !strings.Contains(stderr, "Executors registered: 1 of 1") {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
	})
}

func TestNoSparkContextTimesOut(t *testing.T) {
	marker := newMarker(t)
	_, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local-cluster[1,2,512]", "--deploy-mode", "cluster",
		"--num-executors", "0", "--conf", "spark.yarn.am.waitTime=500ms", "--class", "NoContextApp", "spark-internal")
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"state: FAILED", "exited with exitCode: 13", "Timed out waiting for SparkContext."} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// amLog returns the AM container's stderr under a local cluster's folder.
func amLog(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "logs", "application_*", "container_*_000001", "stderr"))
	if len(files) != 1 {
		t.Fatalf("AM logs under %s: %v", dir, files)
	}
	b, _ := os.ReadFile(files[0])
	return string(b)
}

// killExecutorMidJob runs SparkPi on a local cluster with 2 executors and
// sends sig to executor 1 once tasks have finished; it returns the submit
// process after it exited, and the cluster's folder.
func killExecutorMidJob(t *testing.T, marker string, sig syscall.Signal, extra ...string) (*proc, string) {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"submit", "--master", "local-cluster[3,1,512]", "--deploy-mode", "cluster",
		"--num-executors", "2", "--conf", "spark.sparkrpc.localCluster.dir=" + dir,
		"--conf", "spark.examples.sparkPi.taskDelay=100ms", "--conf", "spark.yarn.scheduler.heartbeat.interval-ms=100"}, extra...)
	p := start(t, marker, append(args, "--class", "SparkPi", "spark-internal", "60")...)
	var exec1 procInfo
	testutil.Eventually(t, time.Minute, "executor 1 to run tasks", func() bool {
		var ok bool
		exec1, ok = findProcess(marker, " executor ", "--executor-id 1 ")
		return ok && regexp.MustCompile(`\[Stage 0:[=> ]*\(([1-9]\d*) \+`).MatchString(p.stderr.String())
	})
	if err := syscall.Kill(exec1.pid, sig); err != nil {
		t.Fatal(err)
	}
	p.wait(t, 2*time.Minute)
	return p, dir
}

func TestExecutorKilledIsReplaced(t *testing.T) {
	marker := newMarker(t)
	p, dir := killExecutorMidJob(t, marker, syscall.SIGKILL)
	if p.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", p.code, p.stdout, p.stderr)
	}
	checkPi(t, p.stdout.String(), 60)
	log := amLog(t, dir)
	for _, want := range []string{"Launching executor 3 ", "Exit status: 137."} {
		if !strings.Contains(log, want) {
			t.Errorf("AM log lacks %q:\n%s", want, log)
		}
	}
}

func TestTooManyExecutorFailures(t *testing.T) {
	marker := newMarker(t)
	p, dir := killExecutorMidJob(t, marker, syscall.SIGKILL, "--conf", "spark.executor.maxNumFailures=1")
	if p.code != 1 || !strings.Contains(p.stderr.String(), "Max number of executor failures (1) reached") {
		t.Fatalf("exit %d\n%s", p.code, p.stderr)
	}
	if log := amLog(t, dir); !strings.Contains(log, "exitCode=11") {
		t.Errorf("AM log lacks exit code 11:\n%s", log)
	}
}

func TestExecutorSIGTERMIsGraceful(t *testing.T) {
	marker := newMarker(t)
	// With maxNumFailures=1 the application would fail if the executor's
	// exit counted as a failure.
	p, dir := killExecutorMidJob(t, marker, syscall.SIGTERM, "--conf", "spark.executor.maxNumFailures=1")
	if p.code != 0 {
		t.Fatalf("exit %d\n%s", p.code, p.stderr)
	}
	checkPi(t, p.stdout.String(), 60)
	log := amLog(t, dir)
	for _, re := range []string{
		`Executor for container container_\d+_0001_01_000002 exited normally`,
		// The executor told the driver before it went: first that it takes
		// no more tasks, then that it is gone, with its own reason.
		`executor is decommissioning; it gets no new tasks .*executor=1 `,
		`Lost executor .*executor=1 .*reason="Executor decommissioned"`,
	} {
		if !regexp.MustCompile(re).MatchString(log) {
			t.Errorf("AM log lacks %q:\n%s", re, log)
		}
	}
	var execLog string
	files, _ := filepath.Glob(filepath.Join(dir, "*", "logs", "application_*", "container_*", "stderr"))
	for _, f := range files {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "Successfully registered with driver component=executor executor=1 ") {
			execLog = string(b)
		}
	}
	if !regexp.MustCompile(`(?s)Decommissioning: finishing the running tasks.*Executor decommissioned code=0`).MatchString(execLog) {
		t.Errorf("executor 1's log lacks its decommissioning:\n%s", execLog)
	}
}

// The application master process exits with Spark's codes: 15 for an
// unknown application, 13 when the application never brings up its driver
// within spark.yarn.am.waitTime (both before it reaches the resource
// manager, which need not exist).
func TestApplicationMasterExitCodes(t *testing.T) {
	marker := newMarker(t)
	for _, tc := range []struct {
		class, conf string
		code        int
		want        string
	}{
		{"NoSuchApp", "", 15, "application class not found: NoSuchApp"},
		{"NoContextApp", "spark.yarn.am.waitTime=200ms\n", 13, "Timed out waiting for SparkContext."},
	} {
		t.Run(tc.class, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "__spark_conf__.properties"), []byte(tc.conf), 0o644); err != nil {
				t.Fatal(err)
			}
			p := startIn(t, marker, dir, []string{"SPARKRPC_APP_ID=application_1_0001", "CONTAINER_ID=container_1_0001_01_000001"},
				"applicationmaster", "--rm", "127.0.0.1:1", "--class", tc.class)
			if code := p.wait(t, 30*time.Second); code != tc.code || !strings.Contains(p.stderr.String(), tc.want) {
				t.Fatalf("exit %d, want %d and %q:\n%s", code, tc.code, tc.want, p.stderr)
			}
		})
	}
}

// runningPi starts SparkPi with long tasks on a local cluster and returns
// once tasks have finished.
func runningPi(t *testing.T, marker, mode string) *proc {
	t.Helper()
	p := start(t, marker, "submit", "--master", "local-cluster[2,1,512]", "--deploy-mode", mode,
		"--conf", "spark.examples.sparkPi.taskDelay=100ms", "--conf", "spark.ui.showConsoleProgress=true",
		"--class", "SparkPi", "spark-internal", "1000")
	testutil.Eventually(t, time.Minute, "tasks to finish", func() bool {
		return regexp.MustCompile(`\[Stage 0:[=> ]*\(([1-9]\d*) \+`).MatchString(p.stderr.String())
	})
	return p
}

// noneLeft waits until no process of the test is left.
func noneLeft(t *testing.T, marker string) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, "every process to be gone", func() bool { return len(markedProcesses(marker)) == 0 })
}

// An interrupted submit kills its application and leaves no process.
func TestSubmitInterruptedKillsApplication(t *testing.T) {
	for _, mode := range []string{"cluster", "client"} {
		t.Run(mode, func(t *testing.T) {
			marker := newMarker(t)
			p := runningPi(t, marker, mode)
			if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			code := p.wait(t, time.Minute)
			if code != 1 || !regexp.MustCompile(`(?m)^sparkrpc: interrupt.*: killed application application_\d+_0001$`).MatchString(p.stderr.String()) {
				t.Fatalf("exit %d\n%s", code, p.stderr)
			}
			noneLeft(t, marker)
		})
	}
}

// A submit that is killed outright (SIGKILL) leaves no container behind:
// the kernel kills its children. (What it cannot remove is the embedded
// cluster's folder: the test puts it in one of its own.)
func TestSubmitKilledLeavesNoContainers(t *testing.T) {
	marker := newMarker(t)
	// With a slow AM heartbeat the orphaned AM would notice the loss of
	// its resource manager only after minutes, and its driver would keep
	// its executors busy: the kernel has to stop them.
	p := start(t, marker, "submit", "--master", "local-cluster[2,1,512]", "--deploy-mode", "cluster",
		"--conf", "spark.sparkrpc.localCluster.dir="+t.TempDir(),
		"--conf", "spark.yarn.scheduler.heartbeat.interval-ms=60000", "--conf", "spark.examples.sparkPi.taskDelay=100ms",
		"--class", "SparkPi", "spark-internal", "1000")
	testutil.Eventually(t, time.Minute, "the AM and an executor", func() bool {
		_, am := findProcess(marker, " applicationmaster ")
		_, ex := findProcess(marker, " executor ")
		return am && ex
	})
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait(t, 30*time.Second)
	noneLeft(t, marker)
}

// rmCluster is a resource manager process and node manager processes.
type rmCluster struct {
	rm   *proc
	addr string
	nms  []*proc
	dirs []string
}

func startRMCluster(t *testing.T, marker string, rmArgs []string, nodes ...[]string) *rmCluster {
	t.Helper()
	c := &rmCluster{rm: start(t, marker, append([]string{"resourcemanager", "--port", "0", "--webui-port", "0"}, rmArgs...)...)}
	re := regexp.MustCompile(`ResourceManager listening on rm://(\S+)`)
	testutil.Eventually(t, 30*time.Second, "the resource manager", func() bool {
		m := re.FindStringSubmatch(c.rm.stdout.String())
		if m != nil {
			c.addr = m[1]
		}
		return m != nil
	})
	for _, n := range nodes {
		dir := t.TempDir()
		nm := start(t, marker, append([]string{"nodemanager", "--rm", c.addr, "--dir", dir, "--kill-grace", "200ms", "--webui-port", "0"}, n...)...)
		testutil.Eventually(t, 30*time.Second, "a node manager to register", func() bool { return strings.Contains(nm.stdout.String(), "registered with") })
		c.nms = append(c.nms, nm)
		c.dirs = append(c.dirs, dir)
	}
	return c
}

func (c *rmCluster) stop(t *testing.T) {
	t.Helper()
	for _, p := range append(c.nms, c.rm) {
		select {
		case <-p.done:
			continue
		default:
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := p.wait(t, 30*time.Second); code != 0 {
			t.Errorf("%v exited %d\n%s", p.cmd.Args[1:], code, p.stderr)
		}
	}
}

var appIDRe = regexp.MustCompile(`Submitted application (application_\d+_\d{4})`)

func TestStatusAndKill(t *testing.T) {
	for _, mode := range []string{"cluster", "client"} {
		t.Run(mode, func(t *testing.T) { testStatusAndKill(t, mode) })
	}
}

// testStatusAndKill checks --status and --kill of an application submitted
// in mode: in client mode the driver, which runs in the submitting process,
// reports its tasks too.
func testStatusAndKill(t *testing.T, mode string) {
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil, []string{"--memory", "2g", "--cores", "2"}, []string{"--memory", "2g", "--cores", "2"})
	master := "rm://" + c.addr
	args := []string{"submit", "--master", master, "--deploy-mode", mode,
		"--conf", "spark.yarn.submit.waitAppCompletion=false", "--conf", "spark.examples.sparkPi.taskDelay=200ms",
		"--conf", "spark.yarn.report.interval=100ms", "--name", "long pi", "--queue", "default", "--class", "SparkPi", "spark-internal", "2000"}
	var stderr string
	var code int
	var submitter *proc
	if mode == "cluster" {
		_, stderr, code = runBin(t, marker, time.Minute, args...)
	} else {
		// The client-mode submit runs the driver: it lives as long as the application.
		submitter = start(t, marker, args...)
		testutil.Eventually(t, time.Minute, "the submission", func() bool { return appIDRe.MatchString(submitter.stderr.String()) })
		stderr = submitter.stderr.String()
	}
	m := appIDRe.FindStringSubmatch(stderr)
	if code != 0 || m == nil {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	app := m[1]
	var status string
	testutil.Eventually(t, time.Minute, "the application to run tasks", func() bool {
		status, _, _ = runBin(t, marker, 30*time.Second, "submit", "--master", master, "--status", app)
		return strings.Contains(status, "state: RUNNING") && regexp.MustCompile(`tasks: [1-9]\d* done`).MatchString(status)
	})
	if !strings.Contains(status, "Application report for "+app) || !strings.Contains(status, "final status: UNDEFINED") {
		t.Fatalf("status:\n%s", status)
	}
	// The tracking URL is the driver's UI, which serves the application.
	tm := trackingRe.FindStringSubmatch(status)
	if tm == nil {
		t.Fatalf("status without a tracking URL:\n%s", status)
	}
	if code, body := httpGet(t, tm[1]+"/api/v1/applications"); code != 200 || !strings.Contains(body, `"id": "`+app+`"`) {
		t.Fatalf("GET %s/api/v1/applications = %d %s", tm[1], code, body)
	}
	if code, body := httpGet(t, tm[1]+"/metrics"); code != 200 || !strings.Contains(body, "sparkrpc_scheduler_executors_active ") ||
		!strings.Contains(body, "go_goroutines ") {
		t.Fatalf("GET %s/metrics = %d, want the scheduler's and the Go runtime's metrics:\n%s", tm[1], code, body)
	}
	if _, ok := findProcess(marker, " executor ", "--app-id "+app); !ok {
		t.Fatalf("no executor process runs: %v", markedProcesses(marker))
	}
	out, stderr, code := runBin(t, marker, 30*time.Second, "submit", "--master", master, "--kill", app)
	if code != 0 || !strings.Contains(out, "Killed application "+app) {
		t.Fatalf("kill: exit %d\n%s\n%s", code, out, stderr)
	}
	status, _, code = runBin(t, marker, 30*time.Second, "submit", "--master", master, "--status", app)
	if code != 0 || !strings.Contains(status, "state: KILLED") || !strings.Contains(status, "final status: KILLED") ||
		!regexp.MustCompile(`tasks: \d+ done, 0 running, of 2000`).MatchString(status) {
		t.Fatalf("status after kill: exit %d\n%s", code, status)
	}
	if submitter != nil {
		if code := submitter.wait(t, time.Minute); code != 1 {
			t.Errorf("the client-mode submit of a killed application exited %d\n%s", code, submitter.stderr)
		}
	}
	testutil.Eventually(t, 30*time.Second, "every container process to be gone", func() bool {
		for _, p := range markedProcesses(marker) {
			if len(p.args) > 1 && (p.args[1] == "executor" || p.args[1] == "applicationmaster") {
				return false
			}
		}
		return true
	})
	_, stderr, code = runBin(t, marker, 30*time.Second, "submit", "--master", master, "--status", "application_1_0042")
	if code != 1 || !strings.Contains(stderr, "doesn't exist") {
		t.Fatalf("status of an unknown app: exit %d\n%s", code, stderr)
	}
	c.stop(t)
}

func TestNodeManagerDeathLosesContainers(t *testing.T) {
	marker := newMarker(t)
	// Node 2 is the only one with 2 cores: the AM goes there; the executor
	// can only go to node 1.
	// Nodes heartbeat every second: an expiry of several heartbeats keeps
	// the live node from being lost when one of its heartbeats is late on
	// a busy machine (with 1s it could be, and the AM on it with it).
	c := startRMCluster(t, marker, []string{"--node-expiry", "4s"},
		[]string{"--memory", "2g", "--cores", "1"}, []string{"--memory", "1g", "--cores", "2"})
	master := "rm://" + c.addr
	_, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", master, "--deploy-mode", "cluster",
		"--driver-cores", "2", "--driver-memory", "512m", "--num-executors", "1", "--executor-memory", "512m",
		"--conf", "spark.yarn.submit.waitAppCompletion=false", "--conf", "spark.examples.sparkPi.taskDelay=200ms",
		"--class", "SparkPi", "spark-internal", "1000")
	m := appIDRe.FindStringSubmatch(stderr)
	if code != 0 || m == nil {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	app := m[1]
	var logs []string
	testutil.Eventually(t, time.Minute, "the AM's log", func() bool {
		logs, _ = filepath.Glob(filepath.Join(c.dirs[1], "logs", app, "container_*_000001", "stderr"))
		return len(logs) == 1
	})
	// The node manager dies once it has told the AM that the executor's
	// container started: killed before that, the AM takes the container
	// for one that failed to launch, not for one that was lost.
	started := regexp.MustCompile(`Started executor 1 in container`)
	testutil.Eventually(t, time.Minute, "the executor's container to start on node 1", func() bool {
		b, _ := os.ReadFile(logs[0])
		return started.Match(b)
	})
	if err := c.nms[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	c.nms[0].wait(t, 30*time.Second)
	lost := regexp.MustCompile(`exit status -100\)\..*lost\* node`)
	deadline := time.Now().Add(90 * time.Second)
	for {
		b, _ := os.ReadFile(logs[0])
		if lost.Match(b) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for the AM to hear that the executor's container was lost\nAM log:\n%s\nresource manager:\n%s",
				b, c.rm.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	testutil.Eventually(t, 90*time.Second, "the executor process to be gone", func() bool {
		_, ok := findProcess(marker, " executor ", "--app-id "+app)
		return !ok
	})
	if _, _, code := runBin(t, marker, 30*time.Second, "submit", "--master", master, "--kill", app); code != 0 {
		t.Fatalf("kill exit %d", code)
	}
	c.stop(t)
}

// Everything after the primary resource belongs to the application, as in
// spark-submit, even what looks like a flag.
func TestAppArgumentsBelongToTheApp(t *testing.T) {
	marker := newMarker(t)
	_, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local[1]", "--class", "SparkPi", "spark-internal", "-5")
	if code != 1 || !strings.Contains(stderr, `sparkrpc: SparkPi: the number of slices must be a positive integer, not "-5"`) {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	stdout, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local[1]", "--class=SparkPi", "spark-internal", "3", "--verbose")
	if code != 0 || strings.Contains(stderr, "Parsed arguments") {
		t.Fatalf("exit %d: --verbose after the primary resource was taken as submit's\n%s", code, stderr)
	}
	checkPi(t, stdout, 3)
}
