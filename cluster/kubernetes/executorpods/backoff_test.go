package executorpods

import (
	"testing"
	"time"
)

func TestBackoffDelay(t *testing.T) {
	for _, tc := range []struct {
		attempt  int
		r        float64
		min, max time.Duration
	}{
		{1, 0, 50 * time.Millisecond, 50 * time.Millisecond},
		{1, 0.999, 50 * time.Millisecond, 100 * time.Millisecond},
		{2, 0.5, 150 * time.Millisecond, 150 * time.Millisecond},
		{4, 0.999, 400 * time.Millisecond, 800 * time.Millisecond},
		{12, 0, maxBackoff / 2, maxBackoff / 2},
		{1000, 0.999, maxBackoff / 2, maxBackoff},
	} {
		if d := backoffDelay(tc.attempt, 100*time.Millisecond, tc.r); d < tc.min || d > tc.max {
			t.Errorf("backoffDelay(%d, 100ms, %v) = %s, want within [%s, %s]", tc.attempt, tc.r, d, tc.min, tc.max)
		}
	}
}
