package main

import (
	"strings"
	"testing"
	"time"
)

// A secret on the command line is readable by every user of the machine
// (ps, /proc/PID/cmdline): every command refuses it and says what to use.
func TestSecretOnCommandLineRefused(t *testing.T) {
	marker := newMarker(t)
	for _, args := range [][]string{
		{"resourcemanager", "--port", "0", "--webui-port", "-1", "--conf", "spark.authenticate.secret=s3cr3t"},
		{"nodemanager", "--rm", "127.0.0.1:1", "--dir", t.TempDir(), "--register-timeout", "1s", "--webui-port", "-1", "--conf", "spark.authenticate.secret=s3cr3t"},
		{"submit", "--master", "local[1]", "--conf", "spark.authenticate=true", "--conf", " spark.authenticate.secret = s3cr3t", "--class", "SparkPi", "spark-internal", "1"},
	} {
		_, stderr, code := runBin(t, marker, 30*time.Second, args...)
		if code != 1 || !strings.Contains(stderr, "spark.authenticate.secret must not be given with --conf") ||
			!strings.Contains(stderr, "spark.authenticate.secret.file") || !strings.Contains(stderr, "SPARKRPC_AUTH_SECRET") {
			t.Errorf("%s: exit %d\n%s", args[0], code, stderr)
		}
	}
}
