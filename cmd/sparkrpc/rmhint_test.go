package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A submission that cannot reach the resource manager asks whether it runs
// there only when nothing listens; refused for its credentials, it says
// so, without the hint (which sent users looking for a daemon that was
// running).
func TestSubmitUnreachableRMHintOnlyWhenRefused(t *testing.T) {
	marker := newMarker(t)
	_, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "rm://127.0.0.1:1", "--class", "SparkPi", "spark-internal", "2")
	if code == 0 || !strings.Contains(stderr, "is 'sparkrpc resourcemanager' running there?") {
		t.Errorf("submit to a port nothing listens on: exit %d\n%s", code, stderr)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("0123456789abcdef-hint-secret-of-the-test"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startRMCluster(t, marker, []string{"--conf", "spark.authenticate=true", "--conf", "spark.authenticate.secret.file=" + secret})
	defer c.stop(t)
	_, stderr, code = runBin(t, marker, time.Minute, "submit", "--master", "rm://"+c.addr, "--class", "SparkPi", "spark-internal", "2")
	if code == 0 || strings.Contains(stderr, "running there?") || !strings.Contains(stderr, "authentication") {
		t.Errorf("submit without the secret to a resource manager with it: exit %d\n%s", code, stderr)
	}
}
