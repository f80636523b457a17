package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// When submit takes the cluster's secret from SPARKRPC_AUTH_SECRET and hands
// the submission over to the program given as primary resource, that
// program gets the secret on a pipe, not in its environment, which
// /proc/PID/environ shows; and, authentication on, it runs the application
// with it. Before, the program inherited submit's environment, secret and
// all.
func TestHandOverKeepsTheSecretOutOfTheEnvironment(t *testing.T) {
	marker := newMarker(t)
	dir := t.TempDir()
	other := otherProgram(t, dir)
	secret := "hand-over-secret-" + strconv.Itoa(os.Getpid())
	p := startIn(t, marker, dir, []string{cli.EnvAuthSecret + "=" + secret}, "submit", "--master", "local[1]",
		"--conf", "spark.authenticate=true", "--conf", "spark.examples.sparkPi.taskDelay=100ms",
		"--class", "SparkPi", other, "20")
	var environ []byte
	testutil.Eventually(t, time.Minute, "the program's own submit", func() bool {
		for _, q := range markedProcesses(marker) {
			if len(q.args) > 1 && q.args[0] == other && q.args[1] == "submit" {
				b, err := os.ReadFile("/proc/" + strconv.Itoa(q.pid) + "/environ")
				if err != nil {
					return false // gone already, or not yet readable
				}
				environ = b
				return true
			}
		}
		return false
	})
	if bytes.Contains(environ, []byte(secret)) {
		t.Errorf("the secret is in the environment of %s:\n%s", other, bytes.ReplaceAll(environ, []byte{0}, []byte{'\n'}))
	}
	if code := p.wait(t, 2*time.Minute); code != 0 || !strings.Contains(p.stdout.String(), "Pi is roughly") {
		t.Fatalf("submit exited %d\nstdout:\n%s\nstderr:\n%s", code, p.stdout, p.stderr)
	}
}
