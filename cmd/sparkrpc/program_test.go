package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// built holds the programs the tests built, by folder.
var built sync.Map // dir -> *builtProgram

// builtProgram is a program built once per test run.
type builtProgram struct {
	once sync.Once
	path string
	err  error
}

// program returns the path of the program built from the package dir
// (relative to this package, e.g. ../../examples/sumofsquares); a module of
// its own builds in its own folder.
func program(t *testing.T, dir string) string {
	t.Helper()
	v, _ := built.LoadOrStore(dir, &builtProgram{})
	b := v.(*builtProgram)
	b.once.Do(func() {
		b.path = filepath.Join(filepath.Dir(binary), filepath.Base(dir))
		b.err = testutil.GoBuild(dir, b.path)
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// sumOfSquares is the example program in a module of its own.
func sumOfSquares(t *testing.T) string { return program(t, "../../examples/sumofsquares") }

// spark-submit's grammar: options in any order up to the primary resource
// (here every option after --class, as in Spark's own example command),
// then the application's arguments, even those that look like options.
func TestSubmitGrammar(t *testing.T) {
	marker := newMarker(t)
	stdout, stderr, code := runBin(t, marker, time.Minute, "submit", "--class", "SparkPi", "--master", "local-cluster[2,1,1024]",
		"--conf", "spark.ui.enabled=false", "--executor-memory", "512m", "spark-internal", "10")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	checkPi(t, stdout, 10)
	// After the primary resource, "--conf" is the application's.
	_, stderr, code = runBin(t, marker, time.Minute, "submit", "--master", "local[1]", "--class", "ErrorApp",
		"--conf", "spark.ui.enabled=false", "spark-internal", "--conf", "x")
	if code == 0 || !strings.Contains(stderr, "--conf x") {
		t.Fatalf("ErrorApp --conf x: exit %d\n%s", code, stderr)
	}
	plain := program(t, "./testdata/plainsubmit")
	notExec := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no primary resource", []string{"--class", "SparkPi"}, "missing the primary resource"},
		{"the arguments of old", []string{"--class", "SparkPi", "10"}, `primary resource "10": no such program`},
		{"a hint for them", []string{"--class", "SparkPi", "10"}, "--class SparkPi spark-internal 10"},
		{"not executable", []string{"--class", "SparkPi", notExec}, "is not an executable program"},
		{"not a launcher program", []string{plain}, "is not a program built on package launcher"},
		{"unknown class", []string{"--class", "Nope", "spark-internal"}, `unknown application "Nope"`},
		{"option after the resource", []string{"spark-internal", "--class", "SparkPi"}, "missing application"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runBin(t, marker, time.Minute, append([]string{"submit", "--master", "local[1]"}, tc.args...)...)
			if code != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "usage: sparkrpc submit") {
				t.Fatalf("exit %d, want 1 and %q\n%s", code, tc.want, stderr)
			}
		})
	}
}

// --version, version and submit --version print one line.
func TestVersionEverywhere(t *testing.T) {
	marker := newMarker(t)
	var lines []string
	for _, args := range [][]string{{"--version"}, {"version"}, {"submit", "--version"}} {
		stdout, stderr, code := runBin(t, marker, 30*time.Second, args...)
		if code != 0 || !strings.HasPrefix(stdout, "sparkrpc ") {
			t.Fatalf("%v: exit %d, %q\n%s", args, code, stdout, stderr)
		}
		lines = append(lines, stdout)
	}
	if lines[0] != lines[1] || lines[1] != lines[2] {
		t.Fatalf("different versions: %q", lines)
	}
}

// The example program, in a module of its own, submitted as Spark's own
// example command submits a jar (every option after --class), prints its
// exact result on every master; its containers run it, not sparkrpc.
func TestSubmitOwnProgram(t *testing.T) {
	prog := sumOfSquares(t)
	opts := func(master, mode string) []string {
		return []string{"submit", "--class", "SumOfSquares", "--master", master, "--deploy-mode", mode,
			"--driver-memory", "512m", "--executor-memory", "512m", "--executor-cores", "1", "--queue", "default",
			"--conf", "spark.ui.enabled=false", prog, "1", "2", "3", "4"}
	}
	for _, tc := range []struct{ master, mode string }{
		{"local[2]", "client"},
		{"local-cluster[2,1,1024]", "client"},
		{"local-cluster[2,1,1024]", "cluster"},
	} {
		t.Run(tc.master+" "+tc.mode, func(t *testing.T) {
			marker := newMarker(t)
			stdout, stderr, code := runBin(t, marker, 2*time.Minute, opts(tc.master, tc.mode)...)
			if code != 0 || !strings.Contains(stdout, "Sum of squares is 30\n") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
		})
	}
	t.Run("rm:// with two node managers", func(t *testing.T) {
		marker := newMarker(t)
		c := startRMCluster(t, marker, nil, []string{"--memory", "2g", "--cores", "2"}, []string{"--memory", "2g", "--cores", "2"})
		defer c.stop(t)
		stdout, stderr, code := runBin(t, marker, 2*time.Minute, opts("rm://"+c.addr, "client")...)
		if code != 0 || !strings.Contains(stdout, "Sum of squares is 30\n") {
			t.Fatalf("client mode: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		_, stderr, code = runBin(t, marker, 2*time.Minute, opts("rm://"+c.addr, "cluster")...)
		if code != 0 {
			t.Fatalf("cluster mode: exit %d\n%s", code, stderr)
		}
		if out := containerStdout(t, c.dirs); !strings.Contains(out, "Sum of squares is 30\n") {
			t.Fatalf("the driver's stdout in cluster mode:\n%s", out)
		}
	})
	t.Run("its own submit", func(t *testing.T) {
		marker := newMarker(t)
		cmd := exec.Command(prog, "submit", "--master", "local[2]", "--conf", "spark.ui.enabled=false", prog, "5", "6")
		cmd.Env = append(os.Environ(), marker)
		out, err := cmd.Output()
		if err != nil || string(out) != "Sum of squares is 61\n" {
			t.Fatalf("%v: %q", err, out)
		}
	})
}

// containerStdout returns the stdout logs of every container under the
// node managers' folders.
func containerStdout(t *testing.T, dirs []string) string {
	t.Helper()
	var b strings.Builder
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "logs", "*", "*", "stdout"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(data)
		}
	}
	return b.String()
}

// A plain main that calls cluster.Submit on an embedded cluster is refused
// at once; one that names itself as the containers' program has its
// containers refuse to submit again: no process is started without end.
func TestPlainMainCannotSubmitItselfWithoutEnd(t *testing.T) {
	plain := program(t, "./testdata/plainsubmit")
	marker := newMarker(t)
	run := func(args ...string) (string, int) {
		// A regression would start processes without end: the deadline
		// ends the test, and the marker's check finds what is left.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, plain, args...)
		cmd.Env = append(os.Environ(), marker, "SPARKRPC_CONTAINER_ENV_WHITELIST="+markerKey)
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	out, code := run()
	if code != 1 || !strings.Contains(out, "launcher.Run") || !strings.Contains(out, "no program for the containers") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// The application master's container refuses to submit again: its
	// error is in the application's diagnostics.
	out, code = run("-exe")
	if code != 1 || !strings.Contains(out, "submit called in a container") || !strings.Contains(out, "launcher.Run") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// A primary resource of 100 MiB is staged and localized in bounded memory:
// the peak RSS of the submitting client, the resource manager and the node
// managers grows by less than 16 MiB over that of a submission of the same
// program without the extra 100 MiB.
func TestLargeProgramInBoundedMemory(t *testing.T) {
	small := sumOfSquares(t)
	big := filepath.Join(t.TempDir(), "sumofsquares")
	if err := copyPadded(small, big, 100<<20); err != nil {
		t.Fatal(err)
	}
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil, []string{"--memory", "2g", "--cores", "2"}, []string{"--memory", "2g", "--cores", "2"})
	defer c.stop(t)
	daemons := append([]*proc{c.rm}, c.nms...)
	submit := func(prog string) (clientKiB int64, daemonKiB []int64) {
		p := start(t, marker, "submit", "--class", "SumOfSquares", "--master", "rm://"+c.addr, "--deploy-mode", "cluster",
			"--executor-memory", "512m", "--num-executors", "2", "--conf", "spark.ui.enabled=false", prog, "1", "2")
		if code := p.wait(t, 3*time.Minute); code != 0 {
			t.Fatalf("exit %d\n%s", code, p.stderr)
		}
		for _, d := range daemons {
			daemonKiB = append(daemonKiB, peakRSSKiB(t, d.cmd.Process.Pid))
		}
		return maxRSSKiB(p), daemonKiB
	}
	client0, daemons0 := submit(small)
	client1, daemons1 := submit(big)
	t.Logf("peak RSS (KiB) of the client %d -> %d, of the daemons %v -> %v", client0, client1, daemons0, daemons1)
	const bound = 16 << 10 // KiB
	if client1-client0 >= bound {
		t.Errorf("the client's peak RSS grew by %d KiB", client1-client0)
	}
	for i := range daemons0 {
		if daemons1[i]-daemons0[i] >= bound {
			t.Errorf("%v: peak RSS grew by %d KiB", daemons[i].cmd.Args[1], daemons1[i]-daemons0[i])
		}
	}
}

// copyPadded copies the program src to dst (mode 0755) with n bytes of
// noise after it, which an executable's loader ignores.
func copyPadded(src, dst string, n int64) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	rng := rand.NewChaCha8([32]byte{1})
	if _, err := io.CopyN(out, rng, n); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// peakRSSKiB returns the peak resident set size of the running process pid
// (VmHWM).
func peakRSSKiB(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no VmHWM for %d", pid)
	return 0
}

// maxRSSKiB returns the peak resident set size of the ended p and of the
// processes it waited for (a submission hands over to the program's own
// submit), as wait4 reports it.
func maxRSSKiB(p *proc) int64 {
	return p.cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
}

// fileCheck is the test program whose application reads files on every
// executor.
func fileCheck(t *testing.T) string { return program(t, "../../internal/testprog/filecheck") }

// A --files file and a file the application adds (Driver.AddFile) reach
// every executor: through the driver's file server on local[N], and on a
// local cluster in both deploy modes.
func TestFilesReachEveryExecutor(t *testing.T) {
	prog := fileCheck(t)
	dir := t.TempDir()
	given, added := filepath.Join(dir, "given.txt"), filepath.Join(dir, "added.txt")
	for f, s := range map[string]string{given: "from --files", added: "from AddFile"} {
		if err := os.WriteFile(f, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ master, mode string }{
		{"local[2]", "client"},
		{"local-cluster[2,1,1024]", "client"},
		{"local-cluster[2,1,1024]", "cluster"},
	} {
		t.Run(tc.master+" "+tc.mode, func(t *testing.T) {
			marker := newMarker(t)
			stdout, stderr, code := runBin(t, marker, 2*time.Minute, "submit", "--master", tc.master, "--deploy-mode", tc.mode,
				"--files", given, "--executor-memory", "512m", "--conf", "spark.ui.enabled=false",
				prog, "--add", added, "given.txt", "added.txt")
			want := "given.txt: from --files\nadded.txt: from AddFile\nread on "
			if code != 0 || !strings.Contains(stdout, want) {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if executors := map[string]string{"local[2]": "1", "local-cluster[2,1,1024]": "2"}[tc.master]; !strings.Contains(stdout, "read on "+executors+" executors") {
				t.Fatalf("not read on every executor:\n%s", stdout)
			}
		})
	}
}
