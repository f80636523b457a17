package main

import (
	"strings"
	"testing"
	"time"
)

// A --webui-port below -1 or above 65535 is a usage mistake for both
// daemons: -1 is the only negative port that means something (no web UI).
// Before, -5 silently meant no web UI.
func TestDaemonWebUIPortOutOfRangeIsUsageError(t *testing.T) {
	marker := newMarker(t)
	for _, args := range [][]string{
		{"resourcemanager", "--port", "0", "--webui-port", "-5"},
		{"nodemanager", "--rm", "127.0.0.1:1", "--dir", t.TempDir(), "--webui-port", "-5", "--register-timeout", "1s"},
		{"nodemanager", "--rm", "127.0.0.1:1", "--dir", t.TempDir(), "--webui-port", "70000", "--register-timeout", "1s"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, stderr, code := runBin(t, marker, 30*time.Second, args...)
			if code != 1 || !strings.Contains(stderr, "--webui-port must be between 0 and 65535, or -1") || !strings.Contains(stderr, "usage: sparkrpc "+args[0]) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 with the usage line and the range", code, stderr)
			}
		})
	}
}
