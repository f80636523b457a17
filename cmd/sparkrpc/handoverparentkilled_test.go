package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A submit killed outright (SIGKILL: a CI job's timeout, the OOM killer)
// leaves no process behind, as TestSubmitKilledLeavesNoContainers checks
// for the applications compiled in: the same holds when submit has handed
// the submission over to the program given as primary resource. Before,
// that program's own submit, its driver and its executors ran on,
// orphaned, until the application ended.
func TestHandOverEndsWhenSubmitIsKilled(t *testing.T) {
	marker := newMarker(t)
	dir := t.TempDir()
	other := otherProgram(t, dir)
	existing, _ := filepath.Glob(filepath.Join(os.TempDir(), "sparkrpc-executor-files-*"))
	t.Cleanup(func() {
		// The local executor of a program killed outright cannot remove
		// its folder of files.
		left, _ := filepath.Glob(filepath.Join(os.TempDir(), "sparkrpc-executor-files-*"))
		for _, d := range left {
			if !slices.Contains(existing, d) {
				os.RemoveAll(d)
			}
		}
	})
	p := startIn(t, marker, dir, nil, "submit", "--master", "local[1]", "--conf", "spark.examples.sparkPi.taskDelay=200ms",
		"--class", "SparkPi", other, "1000")
	testutil.Eventually(t, time.Minute, "the application to run", func() bool {
		return strings.Contains(p.stderr.String(), "Executors registered")
	})
	// Registered after start's cleanup, so run before it: an orphan that
	// holds submit's stdout would keep its Wait from returning.
	t.Cleanup(func() {
		for _, q := range markedProcesses(marker) {
			syscall.Kill(q.pid, syscall.SIGKILL)
		}
	})
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not p.wait first: the orphans hold submit's stdout and stderr, and
	// its Wait returns only once they are closed.
	noneLeft(t, marker)
	p.wait(t, 30*time.Second)
}

// A Ctrl-C on a terminal reaches submit and the program it handed the
// submission over to (its process group), and submit passes it on: the
// program gets two signals for one, and must still stop cleanly, killing
// its application and removing its embedded cluster's folder, rather than
// take the second for an operator's insistence.
func TestHandOverCtrlCStopsCleanly(t *testing.T) {
	marker := newMarker(t)
	dir := t.TempDir()
	other := otherProgram(t, dir)
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "sparkrpc-local-cluster-*"))
	p := startIn(t, marker, dir, nil, "submit", "--master", "local-cluster[1,1,512]", "--conf", "spark.examples.sparkPi.taskDelay=200ms",
		"--class", "SparkPi", other, "1000")
	var child procInfo
	testutil.Eventually(t, time.Minute, "the application to run", func() bool {
		for _, q := range markedProcesses(marker) {
			if len(q.args) > 1 && q.args[0] == other && q.args[1] == "submit" {
				child = q
			}
		}
		return child.pid != 0 && strings.Contains(p.stderr.String(), "Executors registered")
	})
	// What a terminal's Ctrl-C does: SIGINT to each process of the group.
	if err := syscall.Kill(child.pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	code := p.wait(t, time.Minute)
	if code != 1 || !regexp.MustCompile(`(?m)^sparkrpc: interrupt.*: killed application application_\d+_0001$`).MatchString(p.stderr.String()) {
		t.Fatalf("exit %d, want 1 and the application killed\n%s", code, p.stderr)
	}
	noneLeft(t, marker)
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "sparkrpc-local-cluster-*"))
	if len(after) > len(before) {
		t.Fatalf("the embedded cluster's folder is left: %v", after)
	}
}
