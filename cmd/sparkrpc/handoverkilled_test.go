package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// When submit hands the submission over to the program given as primary
// resource and that program is killed by a signal (the OOM killer, kill -9),
// submit says so, and exits as a shell does (128 + the signal). Before, it
// exited 1 and printed nothing at all, as if the program had printed its
// own error.
func TestHandOverSaysWhenTheProgramIsKilled(t *testing.T) {
	marker := newMarker(t)
	dir := t.TempDir()
	other := otherProgram(t, dir)
	existing, _ := filepath.Glob(filepath.Join(os.TempDir(), "sparkrpc-executor-files-*"))
	p := startIn(t, marker, dir, nil, "submit", "--master", "local[1]", "--conf", "spark.examples.sparkPi.taskDelay=200ms",
		"--class", "SparkPi", other, "1000")
	var child procInfo
	testutil.Eventually(t, time.Minute, "the program's own submit", func() bool {
		for _, q := range markedProcesses(marker) {
			if len(q.args) > 1 && q.args[0] == other && q.args[1] == "submit" {
				child = q
				return true
			}
		}
		return false
	})
	testutil.Eventually(t, time.Minute, "the application to run", func() bool {
		return strings.Contains(p.stderr.String(), "Executors registered")
	})
	before := len(p.stderr.String())
	if err := syscall.Kill(child.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	code := p.wait(t, 30*time.Second)
	// The killed program could not remove its executor's folder of files:
	// the test, which killed it, does.
	left, _ := filepath.Glob(filepath.Join(os.TempDir(), "sparkrpc-executor-files-*"))
	for _, d := range left {
		if !slices.Contains(existing, d) {
			os.RemoveAll(d)
		}
	}
	said := strings.TrimSpace(p.stderr.String()[before:])
	if code == 0 || said == "" {
		t.Fatalf("the program %s was killed by SIGKILL; submit exited %d and said nothing about it\nstderr:\n%s", other, code, p.stderr)
	}
}

// otherProgram returns a copy of this binary in dir: a launcher program
// that is not this one, to which submit hands a submission over.
func otherProgram(t *testing.T, dir string) string {
	t.Helper()
	other := filepath.Join(dir, "otherprog")
	src, err := os.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(other, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return other
}
