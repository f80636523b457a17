package main

import (
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/cli"
)

// submit --verbose lists the configuration without the secret whatever
// spark.redaction.regex says: a secret never appears in a log. Before, a
// regex narrower than the default let the secret from SPARKRPC_AUTH_SECRET
// through to stderr.
func TestVerboseHidesTheSecretWhateverTheRegex(t *testing.T) {
	marker := newMarker(t)
	const secret = "a-secret-only-this-test-knows"
	p := startIn(t, marker, t.TempDir(), []string{cli.EnvAuthSecret + "=" + secret}, "submit", "--verbose", "--master", "local[1]",
		"--conf", "spark.redaction.regex=nothing-matches-this", "--class", "SparkPi", "spark-internal", "1")
	code := p.wait(t, time.Minute)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr)
	}
	if out := p.stdout.String() + p.stderr.String(); strings.Contains(out, secret) {
		t.Fatalf("the secret is in submit's output:\n%s", out)
	}
	if !strings.Contains(p.stderr.String(), "(spark.authenticate.secret,*********(redacted))") {
		t.Errorf("the listing does not show the secret's key as redacted:\n%s", p.stderr)
	}
}
