package main

import (
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A client-mode application outlives the close of its idle connections.
// The driver sends its AM nothing while its executors stay as they are, so
// their connection is closed once idle for spark.rpc.io.idleTimeout; the AM
// took that for the driver's end and finished the application ("Driver ...
// disconnected"), which failed the job after the timeout. The AM now looks
// the driver up again and goes on.
func TestClientModeOutlivesIdleCloses(t *testing.T) {
	marker := newMarker(t)
	stdout, stderr, code := runBin(t, marker, 2*time.Minute, "submit", "--master", "local-cluster[2,1,512]", "--deploy-mode", "client",
		"--conf", "spark.rpc.io.idleTimeout=1s", "--conf", "spark.examples.sparkPi.taskDelay=500ms",
		"--class", "SparkPi", "spark-internal", "12")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	checkPi(t, stdout, 12)
}

// A client-mode AM still ends when its driver is gone: the driver's process
// is killed, the AM's look-up of it fails, and the AM and the executors
// exit.
func TestClientModeAMEndsWithItsDriver(t *testing.T) {
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil, []string{"--memory", "2g", "--cores", "2"})
	defer c.stop(t)
	p := start(t, marker, "submit", "--master", "rm://"+c.addr, "--deploy-mode", "client",
		"--conf", "spark.examples.sparkPi.taskDelay=100ms", "--class", "SparkPi", "spark-internal", "1000")
	testutil.Eventually(t, time.Minute, "the AM and an executor", func() bool {
		_, am := findProcess(marker, " applicationmaster ")
		_, ex := findProcess(marker, " executor ")
		return am && ex
	})
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait(t, 30*time.Second)
	testutil.Eventually(t, time.Minute, "the AM and the executors to exit", func() bool {
		_, am := findProcess(marker, " applicationmaster ")
		_, ex := findProcess(marker, " executor ")
		return !am && !ex
	})
}
