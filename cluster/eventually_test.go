package cluster

import (
	"testing"
	"time"
)

// eventually checks cond every 10ms until it holds, and fails the test
// naming what it waited for when d passes first.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for %s", d, what)
		case <-tick.C:
		}
	}
}

// Eventually is eventually for the package's black-box tests.
var Eventually = eventually
