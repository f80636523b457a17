package main

import (
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A client-mode application whose driver is killed mid-job (kill -9, the
// OOM killer) did not succeed, and the resource manager must not say it
// did. A driver that ends tells its AM how the application ended
// (AmDriverFinished), or has it killed: an AM that loses its driver without
// that word has lost it uncleanly. Before, the AM finished such an
// application with final status SUCCEEDED ("Driver ... disconnected"), which
// `apps`, --status and the history showed as a success.
func TestClientModeDriverKilledIsNotASuccess(t *testing.T) {
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil, []string{"--memory", "2g", "--cores", "2"})
	defer c.stop(t)
	master := "rm://" + c.addr
	p := start(t, marker, "submit", "--master", master, "--deploy-mode", "client", "--num-executors", "1",
		"--executor-memory", "512m", "--conf", "spark.examples.sparkPi.taskDelay=100ms", "--class", "SparkPi", "spark-internal", "1000")
	var app string
	testutil.Eventually(t, time.Minute, "the AM and an executor", func() bool {
		m := appIDRe.FindStringSubmatch(p.stderr.String())
		_, am := findProcess(marker, " applicationmaster ")
		_, ex := findProcess(marker, " executor ")
		if m != nil {
			app = m[1]
		}
		return m != nil && am && ex
	})
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait(t, 30*time.Second)
	var status string
	testutil.Eventually(t, time.Minute, "the application to end", func() bool {
		status, _, _ = runBin(t, marker, 30*time.Second, "submit", "--master", master, "--status", app)
		return strings.Contains(status, "state: FINISHED") || strings.Contains(status, "state: FAILED") || strings.Contains(status, "state: KILLED")
	})
	if strings.Contains(status, "final status: SUCCEEDED") {
		t.Fatalf("the driver was killed mid-job, yet the application succeeded:\n%s", status)
	}
}
