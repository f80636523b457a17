package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// local-cluster[N,C,M] runs N executors, as in Spark: the application
// master has a node of its own, and submit says how many registered.
func TestLocalClusterRegistersNExecutors(t *testing.T) {
	for _, mode := range []string{"client", "cluster"} {
		t.Run(mode, func(t *testing.T) {
			marker := newMarker(t)
			dir := t.TempDir()
			stdout, stderr, code := runBin(t, marker, 2*time.Minute, "submit", "--master", "local-cluster[2,1,1024]",
				"--deploy-mode", mode, "--conf", "spark.sparkrpc.localCluster.dir="+dir, "--class", "SparkPi", "spark-internal", "20")
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			checkPi(t, stdout, 20)
			out := stderr
			if mode == "cluster" {
				out = amLog(t, dir) // the driver runs in the AM
			}
			if !strings.Contains(out, "Executors registered: 2 of 2") {
				t.Errorf("no \"Executors registered: 2 of 2\" in the %s output:\n%s", mode, out)
			}
			log := amLog(t, dir)
			for _, want := range []string{"Launching executor 1 ", "Launching executor 2 "} {
				if !strings.Contains(log, want) {
					t.Errorf("AM log lacks %q:\n%s", want, log)
				}
			}
		})
	}
}

// An executor whose process hangs (SIGSTOP) mid-job stops heartbeating:
// after spark.network.timeout the driver removes it (its task runs
// elsewhere) and has it killed and replaced, so that the job finishes with
// the exact result and the stopped process is gone.
func TestHungExecutorIsKilledAndReplaced(t *testing.T) {
	marker := newMarker(t)
	dir := t.TempDir()
	p := start(t, marker, "submit", "--master", "local-cluster[2,1,1024]",
		"--conf", "spark.sparkrpc.localCluster.dir="+dir,
		"--conf", "spark.network.timeout=3s", "--conf", "spark.network.timeoutInterval=200ms",
		"--conf", "spark.executor.heartbeatInterval=200ms", "--conf", "spark.ui.showConsoleProgress=true",
		"--conf", "spark.examples.sparkPi.taskDelay=100ms", "--class", "SparkPi", "spark-internal", "200")
	// Both single-core executors run a task (the progress bar shows 2
	// running), so executor 1 is mid-task when it stops.
	var exec1 procInfo
	running := regexp.MustCompile(`\[Stage 0:[=> ]*\(\d+ \+ 2\) / 200\]`)
	testutil.Eventually(t, time.Minute, "executor 1 to run a task", func() bool {
		var ok bool
		exec1, ok = findProcess(marker, " executor ", "--executor-id 1 ")
		return ok && running.MatchString(p.stderr.String())
	})
	if err := syscall.Kill(exec1.pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, time.Minute, "the stopped executor to be killed", func() bool { return !alive(exec1.pid) })
	// Killed while the job runs, not by the cluster's shutdown at the end.
	if strings.Contains(p.stdout.String(), "Pi is roughly") {
		t.Fatalf("the stopped executor was killed only when the job had ended\nstderr:\n%s", p.stderr)
	}
	if code := p.wait(t, 2*time.Minute); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, p.stdout, p.stderr)
	}
	checkPi(t, p.stdout.String(), 200)
	log := amLog(t, dir)
	for _, re := range []string{
		`Killing executor 1 in container container_\d+_0001_01_\d+; another executor will replace it`,
		`Launching executor 3 `,
		`was killed or released by the cluster \(exit status -\d+\)\. It is not counted as a failure\. Diagnostics: Container released by the application master`,
	} {
		if !regexp.MustCompile(re).MatchString(log) {
			t.Errorf("AM log lacks %q:\n%s", re, log)
		}
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(stat), ") Z ")
}
