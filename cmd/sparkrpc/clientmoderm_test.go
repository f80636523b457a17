package main

import (
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A resource manager killed for good (not restarted) mid-application: the
// client-mode AM gives up after its reporter's failures (exit 12), so the
// application can get no executor any more. The driver in submit must end,
// as a cluster-mode submit ends ("lost contact with the resource manager")
// and as Spark's client-mode monitorApplication ends ("Failed to contact
// YARN for application"). Before, the client-mode submit ignored the lost
// contact: once its executor was gone it waited for ever, with no AM, no
// resource manager and no executor.
func TestClientModeSubmitEndsWhenItsResourceManagerIsGone(t *testing.T) {
	marker := newMarker(t)
	c := startRMCluster(t, marker, []string{"--staging-dir", t.TempDir()}, []string{"--memory", "2g", "--cores", "2"})
	defer c.stop(t)
	p := start(t, marker, "submit", "--master", "rm://"+c.addr, "--deploy-mode", "client", "--num-executors", "1",
		"--executor-memory", "512m", "--conf", "spark.examples.sparkPi.taskDelay=100ms", "--class", "SparkPi", "spark-internal", "1000")
	testutil.Eventually(t, time.Minute, "the executor", func() bool {
		_, ok := findProcess(marker, " executor ")
		return ok && strings.Contains(p.stderr.String(), "Executors registered")
	})
	if err := c.rm.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.rm.wait(t, 30*time.Second)
	// The AM gives up on the resource manager; the executor then dies too
	// (as a node does), and nothing can replace it.
	testutil.Eventually(t, time.Minute, "the AM to give up", func() bool {
		_, am := findProcess(marker, " applicationmaster ")
		return !am
	})
	if ex, ok := findProcess(marker, " executor "); ok {
		syscall.Kill(ex.pid, syscall.SIGKILL)
	}
	code := p.wait(t, time.Minute)
	said := p.stderr.String()
	if i := strings.LastIndex(said, "\nsparkrpc: "); i >= 0 {
		said = said[i+1:]
	}
	if code == 0 || !regexp.MustCompile(`^sparkrpc: .*application_\d+_0001`).MatchString(said) {
		t.Fatalf("exit %d, want an error naming the application\n%s", code, p.stderr)
	}
	t.Logf("submit exited %d: %s", code, said)
}
