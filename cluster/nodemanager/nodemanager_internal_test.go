package nodemanager

import (
	"testing"
	"time"
)

// The registration waits start at 200ms and double up to 10s, each within
// ±20% of its step.
func TestRegisterBackOffGrowsToMaxWithJitter(t *testing.T) {
	b := registerBackOff()
	b.Reset()
	step := 200 * time.Millisecond
	for i := range 12 {
		d := b.NextBackOff()
		if lo, hi := step*8/10, step*12/10; d < lo || d > hi {
			t.Fatalf("wait %d: %s, want within [%s, %s]", i, d, lo, hi)
		}
		step = min(2*step, 10*time.Second)
	}
}
