package main

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A second SIGINT ends submit at once, as it ends the daemons: when the
// first one's clean-up waits on a resource manager that does not answer
// (killing the application, waiting for its end: up to 40s), an operator
// who presses Ctrl-C again is not ignored. Before, every signal after the
// first was swallowed until the clean-up gave up.
func TestSubmitSecondSignalEndsItAtOnce(t *testing.T) {
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil, []string{"--memory", "2g", "--cores", "2"})
	defer c.stop(t)
	p := start(t, marker, "submit", "--master", "rm://"+c.addr, "--deploy-mode", "client", "--num-executors", "1",
		"--executor-memory", "512m", "--conf", "spark.examples.sparkPi.taskDelay=100ms", "--class", "SparkPi", "spark-internal", "1000")
	testutil.Eventually(t, time.Minute, "the executor", func() bool {
		_, ex := findProcess(marker, " executor ")
		return ex
	})
	// The resource manager hangs: the interrupted submit's kill of its
	// application waits for an answer that does not come.
	if err := c.rm.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer c.rm.cmd.Process.Signal(syscall.SIGCONT)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	testutil.Eventually(t, 10*time.Second, "submit to end on a second signal", func() bool {
		select {
		case <-p.done:
			return true
		default:
			p.cmd.Process.Signal(os.Interrupt)
			return false
		}
	})
	t.Logf("exited %d %s after the first signal", p.code, time.Since(sent).Round(time.Millisecond))
}
