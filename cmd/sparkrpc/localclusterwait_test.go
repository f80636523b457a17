package main

import (
	"testing"
	"time"
)

// On local-cluster the embedded cluster lives only as long as submit. With
// spark.yarn.submit.waitAppCompletion=false in cluster mode, submit must not
// exit 0 having shut the cluster down under the application it just
// submitted: either the application runs (and succeeds) or submit fails.
func TestLocalClusterNoWaitDoesNotReportAKilledAppAsSuccess(t *testing.T) {
	marker := newMarker(t)
	stdout, stderr, code := runBin(t, marker, 2*time.Minute, "submit", "--master", "local-cluster[1,1,512]", "--deploy-mode", "cluster",
		"--conf", "spark.yarn.submit.waitAppCompletion=false", "--class", "SparkPi", "spark-internal", "2")
	if code == 0 && !piRe.MatchString(stdout) {
		t.Fatalf("exit 0, but the application never ran: the embedded cluster was shut down under it\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}
