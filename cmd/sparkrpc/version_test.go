package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// `sparkrpc version` prints what `go version -m` reads from the binary: the
// module version and the VCS revision, modification flag and time.
func TestVersionCommandPrintsBuildInfo(t *testing.T) {
	marker := newMarker(t)
	b, err := exec.Command("go", "version", "-m", binary).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/sparkrpc/sparkrpc":
			want["version"] = f[2]
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs."):
			k, v, _ := strings.Cut(f[1], "=")
			want[k] = v
		}
	}
	stdout, stderr, code := runBin(t, marker, 30*time.Second, "version")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if want["version"] == "" || !strings.HasPrefix(stdout, "sparkrpc "+want["version"]+" ") {
		t.Errorf("version line %q, want the module version %q", stdout, want["version"])
	}
	if rev := want["vcs.revision"]; rev != "" {
		if !strings.Contains(stdout, "(revision "+rev) || !strings.Contains(stdout, want["vcs.time"]+")") ||
			strings.Contains(stdout, ", modified") != (want["vcs.modified"] == "true") {
			t.Errorf("version line %q, want the build info %v", stdout, want)
		}
	} else {
		t.Logf("the test binary has no VCS information (built outside a checkout)")
	}
	if strings.Contains(stdout, " dev ") {
		t.Errorf("version line %q", stdout)
	}
	if out, _, _ := runBin(t, marker, 30*time.Second, "submit", "--version"); out != stdout {
		t.Errorf("submit --version printed %q, version %q", out, stdout)
	}
}
