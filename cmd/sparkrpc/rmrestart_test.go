package main

import (
	"net"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A resource manager that is restarted forgets the applications it ran:
// its node managers register again and stop their containers, the AM and
// the executors of a client-mode application included. That application's
// driver, in submit, must end, as Spark's ends when YARN no longer knows
// its application ("Application not found": KILLED). Before, submit went
// on forever with no executor and no AM, its application RUNNING for no
// one. A second submit to the restarted resource manager runs.
func TestClientModeSubmitEndsWhenItsResourceManagerForgetsIt(t *testing.T) {
	marker := newMarker(t)
	// A staging folder of the test's: the killed resource manager cannot
	// remove its own.
	staging := t.TempDir()
	c := startRMCluster(t, marker, []string{"--staging-dir", staging}, []string{"--memory", "2g", "--cores", "2"})
	defer c.stop(t)
	_, port, err := net.SplitHostPort(c.addr)
	if err != nil {
		t.Fatal(err)
	}
	master := "rm://" + c.addr
	p := start(t, marker, "submit", "--master", master, "--deploy-mode", "client", "--num-executors", "1",
		"--executor-memory", "512m", "--conf", "spark.examples.sparkPi.taskDelay=100ms", "--class", "SparkPi", "spark-internal", "1000")
	testutil.Eventually(t, time.Minute, "the executor", func() bool {
		_, ok := findProcess(marker, " executor ")
		return ok && strings.Contains(p.stderr.String(), "Executors registered")
	})
	if err := c.rm.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.rm.wait(t, 30*time.Second)
	// The same address, as an operator restarts it.
	c.rm = start(t, marker, "resourcemanager", "--port", port, "--webui-port", "0", "--staging-dir", staging)
	testutil.Eventually(t, 30*time.Second, "the resource manager to restart", func() bool {
		return strings.Contains(c.rm.stdout.String(), "ResourceManager listening on rm://"+c.addr)
	})
	// The node manager registers again and stops the containers the new
	// resource manager does not know.
	testutil.Eventually(t, time.Minute, "the AM and the executor to be stopped", func() bool {
		_, am := findProcess(marker, " applicationmaster ")
		_, ex := findProcess(marker, " executor ")
		return !am && !ex
	})
	code := p.wait(t, time.Minute)
	said := p.stderr.String()
	if i := strings.LastIndex(said, "\nsparkrpc: "); i >= 0 {
		said = said[i+1:]
	}
	if code == 0 || !regexp.MustCompile(`^sparkrpc: .*application_\d+_0001`).MatchString(said) {
		t.Fatalf("exit %d, want an error naming the application\n%s", code, p.stderr)
	}
	t.Logf("submit exited %d: %s", code, said)
	stdout, stderr, code := runBin(t, marker, 2*time.Minute, "submit", "--master", master, "--num-executors", "1", "--executor-memory", "512m",
		"--class", "SparkPi", "spark-internal", "4")
	if code != 0 {
		t.Fatalf("a submission to the restarted resource manager: exit %d\n%s", code, stderr)
	}
	checkPi(t, stdout, 4)
}
