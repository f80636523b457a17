package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// binary is the sparkrpc binary built once for the package's tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sparkrpc-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "sparkrpc")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building sparkrpc:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

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

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

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
	p := &proc{cmd: exec.Command(binary, args...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), marker)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	p.cmd.Dir = t.TempDir()
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

func TestSubmitSparkPiLocal(t *testing.T) {
	marker := newMarker(t)
	stdout, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local[2]", "--class", "SparkPi", "10")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	piOf(t, stdout)
}

func TestSubmitSparkPiLocalCluster(t *testing.T) {
	for _, mode := range []string{"cluster", "client"} {
		t.Run(mode, func(t *testing.T) {
			marker := newMarker(t)
			stdout, stderr, code := runBin(t, marker, 2*time.Minute, "submit", "--master", "local-cluster[2,1,512]",
				"--deploy-mode", mode, "--class", "SparkPi", "10")
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			piOf(t, stdout)
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
	stdout, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local[3]", "--class", "WordCount", path, "7")
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
		{"unknown class", []string{"--master", "local[1]", "--class", "NoSuchApp"}, `unknown application "NoSuchApp"`},
		{"bad master", []string{"--master", "local[x]", "--class", "SparkPi"}, `invalid master URL: "local[x]"`},
		{"bad local-cluster", []string{"--master", "local-cluster[0,1,512]", "--class", "SparkPi"}, "invalid master URL"},
		{"missing app", []string{"--master", "local[1]"}, "missing application: give its name with --class"},
		{"malformed conf", []string{"--class", "SparkPi", "--conf", "spark.executor.memory"}, `malformed --conf "spark.executor.memory": expected key=value`},
		{"unknown flag", []string{"--class", "SparkPi", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{"kill and status", []string{"--master", "rm://127.0.0.1:1", "--kill", "application_1_0001", "--status", "application_1_0001"}, "--kill and --status cannot be used together"},
		{"bad deploy mode", []string{"--class", "SparkPi", "--deploy-mode", "remote"}, "--deploy-mode must be client or cluster"},
		{"cluster mode on local", []string{"--master", "local[2]", "--deploy-mode", "cluster", "--class", "SparkPi"}, "cluster deploy mode is not compatible"},
		{"bad memory", []string{"--class", "SparkPi", "--executor-memory", "lots"}, `invalid memory "lots"`},
		{"status without rm", []string{"--master", "local[1]", "--status", "application_1_0001"}, "need a running resource manager"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runBin(t, marker, 30*time.Second, append([]string{"submit"}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "usage: sparkrpc submit") {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, tc.want)
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
		"--conf", "spark.app.name=from conf", "--executor-memory", "2g", "--class", "SparkPi", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	piOf(t, stdout)
	for _, want := range []string{"(spark.custom.key,fromfile)", "(spark.executor.memory,2g)", "(spark.app.name,from conf)", "class                   SparkPi"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	_, stderr, code = runBin(t, marker, time.Minute, "submit", "--properties-file", filepath.Join(t.TempDir(), "missing"), "--class", "SparkPi")
	if code != 2 || !strings.Contains(stderr, "--properties-file") {
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
		if code != 2 || !strings.Contains(stderr, "usage:") {
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
				"--class", "ErrorApp", "boom", "at", "work")
			if code == 0 {
				t.Fatalf("exit 0 for a failed application\n%s\n%s", stdout, stderr)
			}
			for _, want := range []string{"boom at work", "final status: FAILED"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
}

func TestAMAboveLargestNodeIsRefused(t *testing.T) {
	marker := newMarker(t)
	_, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local-cluster[2,1,512]", "--deploy-mode", "cluster",
		"--driver-memory", "2g", "--class", "SparkPi")
	if code != 1 || !strings.Contains(stderr, "Required AM memory (2048 MB) is above the max threshold (512 MB) of this cluster!") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}

func TestNoSparkContextTimesOut(t *testing.T) {
	marker := newMarker(t)
	_, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local-cluster[1,2,512]", "--deploy-mode", "cluster",
		"--conf", "spark.yarn.am.waitTime=500ms", "--class", "NoContextApp")
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
	p := start(t, marker, append(args, "--class", "SparkPi", "60")...)
	var exec1 procInfo
	eventually(t, time.Minute, "executor 1 to run tasks", func() bool {
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
	ref, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local[2]", "--class", "SparkPi", "60")
	if code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr)
	}
	p, dir := killExecutorMidJob(t, marker, syscall.SIGKILL)
	if p.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", p.code, p.stdout, p.stderr)
	}
	if got, want := piOf(t, p.stdout.String()), piOf(t, ref); got != want {
		t.Fatalf("Pi is %s after losing an executor, %s without", got, want)
	}
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
	piOf(t, p.stdout.String())
	if log := amLog(t, dir); !regexp.MustCompile(`Executor for container container_\d+_0001_01_000002 exited normally`).MatchString(log) {
		t.Errorf("AM log lacks the executor's clean exit:\n%s", log)
	}
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
	c := &rmCluster{rm: start(t, marker, append([]string{"resourcemanager", "--port", "0"}, rmArgs...)...)}
	re := regexp.MustCompile(`ResourceManager listening on rm://(\S+)`)
	eventually(t, 30*time.Second, "the resource manager", func() bool {
		m := re.FindStringSubmatch(c.rm.stdout.String())
		if m != nil {
			c.addr = m[1]
		}
		return m != nil
	})
	for _, n := range nodes {
		dir := t.TempDir()
		nm := start(t, marker, append([]string{"nodemanager", "--rm", c.addr, "--dir", dir, "--kill-grace", "200ms"}, n...)...)
		eventually(t, 30*time.Second, "a node manager to register", func() bool { return strings.Contains(nm.stdout.String(), "registered with") })
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
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil, []string{"--memory", "2g", "--cores", "2"}, []string{"--memory", "2g", "--cores", "2"})
	master := "rm://" + c.addr
	_, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", master, "--deploy-mode", "cluster",
		"--conf", "spark.yarn.submit.waitAppCompletion=false", "--conf", "spark.examples.sparkPi.taskDelay=200ms",
		"--name", "long pi", "--queue", "default", "--class", "SparkPi", "2000")
	m := appIDRe.FindStringSubmatch(stderr)
	if code != 0 || m == nil {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	app := m[1]
	var status string
	eventually(t, time.Minute, "the application to run tasks", func() bool {
		status, _, _ = runBin(t, marker, 30*time.Second, "submit", "--master", master, "--status", app)
		return strings.Contains(status, "state: RUNNING") && regexp.MustCompile(`tasks: [1-9]\d* done`).MatchString(status)
	})
	if !strings.Contains(status, "Application report for "+app) || !strings.Contains(status, "final status: UNDEFINED") {
		t.Fatalf("status:\n%s", status)
	}
	if _, ok := findProcess(marker, " executor ", "--app-id "+app); !ok {
		t.Fatalf("no executor process runs: %v", markedProcesses(marker))
	}
	out, stderr, code := runBin(t, marker, 30*time.Second, "submit", "--master", master, "--kill", app)
	if code != 0 || !strings.Contains(out, "Killed application "+app) {
		t.Fatalf("kill: exit %d\n%s\n%s", code, out, stderr)
	}
	status, _, code = runBin(t, marker, 30*time.Second, "submit", "--master", master, "--status", app)
	if code != 0 || !strings.Contains(status, "state: KILLED") || !strings.Contains(status, "final status: KILLED") {
		t.Fatalf("status after kill: exit %d\n%s", code, status)
	}
	eventually(t, 30*time.Second, "every container process to be gone", func() bool {
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
	c := startRMCluster(t, marker, []string{"--node-expiry", "1s"},
		[]string{"--memory", "2g", "--cores", "1"}, []string{"--memory", "1g", "--cores", "2"})
	master := "rm://" + c.addr
	_, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", master, "--deploy-mode", "cluster",
		"--driver-cores", "2", "--driver-memory", "512m", "--num-executors", "1", "--executor-memory", "512m",
		"--conf", "spark.yarn.submit.waitAppCompletion=false", "--conf", "spark.examples.sparkPi.taskDelay=200ms",
		"--class", "SparkPi", "1000")
	m := appIDRe.FindStringSubmatch(stderr)
	if code != 0 || m == nil {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	app := m[1]
	eventually(t, time.Minute, "the executor on node 1", func() bool {
		_, ok := findProcess(marker, " executor ", "--app-id "+app)
		return ok
	})
	if err := c.nms[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	c.nms[0].wait(t, 30*time.Second)
	logs, _ := filepath.Glob(filepath.Join(c.dirs[1], "logs", app, "container_*_000001", "stderr"))
	if len(logs) != 1 {
		t.Fatalf("AM log: %v", logs)
	}
	eventually(t, 30*time.Second, "the AM to hear that the executor's container was lost", func() bool {
		b, _ := os.ReadFile(logs[0])
		return regexp.MustCompile(`exit status -100\)\..*lost\* node`).Match(b)
	})
	eventually(t, 30*time.Second, "the executor process to be gone", func() bool {
		_, ok := findProcess(marker, " executor ", "--app-id "+app)
		return !ok
	})
	if _, _, code := runBin(t, marker, 30*time.Second, "submit", "--master", master, "--kill", app); code != 0 {
		t.Fatalf("kill exit %d", code)
	}
	c.stop(t)
}
