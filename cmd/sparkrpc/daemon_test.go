package main

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A node manager whose resource manager is not there retries with backoff,
// logs each attempt, and exits promptly on SIGTERM or SIGINT.
func TestNodeManagerWithoutRMExitsOnSignal(t *testing.T) {
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		t.Run(sig.String(), func(t *testing.T) {
			marker := newMarker(t)
			p := start(t, marker, "nodemanager", "--rm", "127.0.0.1:1", "--dir", t.TempDir())
			eventually(t, 30*time.Second, "two registration attempts", func() bool { return strings.Contains(p.stderr.String(), "attempt=2 ") })
			sent := time.Now()
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code := p.wait(t, 10*time.Second)
			t.Logf("exited %s after the signal", time.Since(sent).Round(time.Millisecond))
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, p.stderr)
			}
			if n := strings.Count(p.stderr.String(), "cannot register with the resource manager; retrying"); n < 2 {
				t.Errorf("%d attempts logged:\n%s", n, p.stderr)
			}
		})
	}
}

// With --register-timeout the node manager gives up and says why.
func TestNodeManagerRegisterTimeout(t *testing.T) {
	marker := newMarker(t)
	_, stderr, code := runBin(t, marker, 30*time.Second, "nodemanager", "--rm", "127.0.0.1:1", "--dir", t.TempDir(), "--register-timeout", "1s")
	if code != 1 || !strings.Contains(stderr, "sparkrpc: cluster: node manager could not register: the resource manager at 127.0.0.1:1 did not answer within 1s") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}

// The resource manager exits 0 promptly on SIGINT as on SIGTERM.
func TestResourceManagerExitsOnSignal(t *testing.T) {
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		t.Run(sig.String(), func(t *testing.T) {
			marker := newMarker(t)
			c := startRMCluster(t, marker, nil)
			sent := time.Now()
			if err := c.rm.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code := c.rm.wait(t, 10*time.Second)
			t.Logf("exited %s after the signal", time.Since(sent).Round(time.Millisecond))
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, c.rm.stderr)
			}
		})
	}
}
