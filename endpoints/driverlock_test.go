package endpoints_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// A driver given WithLockRelease calls it each time it releases its lock:
// every scheduling step (a registration, a job, a status update) runs
// under it.
func TestWithLockReleaseIsCalledAtEveryDriverLockRelease(t *testing.T) {
	var releases atomic.Int64
	c := startCluster(t, memNetwork(), testConf(), 1, 1, endpoints.WithLockRelease(func() { releases.Add(1) }))
	before := releases.Load()
	if before == 0 {
		t.Fatalf("no driver lock released while an executor registered")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := c.Driver.RunJob(ctx, "test.executor", [][]byte{nil}); err != nil {
		t.Fatalf("RunJob: %v", err)
	}
	if after := releases.Load(); after <= before {
		t.Errorf("a job released no driver lock: %d releases before, %d after", before, after)
	}
}
