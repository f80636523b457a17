package main

import (
	"strings"
	"testing"
)

// `sparkrpc bench --metrics-addr ADDR` serves /metrics during the run and
// says where; an address it cannot listen on is a usage error.
func TestBenchMetricsAddr(t *testing.T) {
	out, err := execBench(t, "bench", "--scenarios", "local-ask", "--count", "200", "--warmup-count", "20",
		"--inflight", "1", "--progress", "never", "--metrics-addr", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("bench --metrics-addr: %v\n%s", err, out)
	}
	if !strings.Contains(out, "serving metrics on http://127.0.0.1:") || !strings.Contains(out, "/metrics") {
		t.Errorf("no metrics URL in the output:\n%s", out)
	}
	out, err = execBench(t, "bench", "--scenarios", "local-ask", "--count", "200", "--metrics-addr", "no-such-host.invalid:x")
	if err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Errorf("bad --metrics-addr = %v, want a usage error naming the flag\n%s", err, out)
	}
}
