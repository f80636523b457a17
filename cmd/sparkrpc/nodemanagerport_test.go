package main

import (
	"strings"
	"testing"
	"time"
)

// A --port outside 0..65535 is a usage mistake, as the resource manager
// says ("--port must be between 0 and 65535"), not a bind failure with a
// garbled message.
func TestNodeManagerPortOutOfRangeIsUsageError(t *testing.T) {
	marker := newMarker(t)
	for _, port := range []string{"70000", "-1"} {
		t.Run(port, func(t *testing.T) {
			_, stderr, code := runBin(t, marker, 30*time.Second, "nodemanager", "--rm", "127.0.0.1:1", "--dir", t.TempDir(),
				"--port", port, "--webui-port", "-1", "--register-timeout", "1s")
			if code != 1 || strings.Contains(stderr, "%!") || !strings.Contains(stderr, "usage: sparkrpc nodemanager") {
				t.Fatalf("--port %s: exit %d, stderr:\n%s\nwant exit 1 with the usage line and a readable message", port, code, stderr)
			}
		})
	}
}
