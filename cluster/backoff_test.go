package cluster

import (
	"testing"
	"time"
)

func TestBackoffGrowsToMaxWithJitter(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    float64
		want []time.Duration
	}{
		{"no randomness", 0.5, []time.Duration{100, 200, 400, 800, 1000, 1000}},
		{"lowest", 0, []time.Duration{80, 160, 320, 640, 800, 800}},
		{"highest", 1, []time.Duration{120, 240, 480, 960, 1200, 1200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBackoff(100*time.Millisecond, time.Second)
			b.rand = func() float64 { return tc.r }
			for i, want := range tc.want {
				if got := b.next(); got != want*time.Millisecond {
					t.Fatalf("wait %d: %s, want %s", i, got, want*time.Millisecond)
				}
			}
		})
	}
	b := newBackoff(100*time.Millisecond, time.Second)
	for i := 0; i < 100; i++ {
		if d := b.next(); d < 80*time.Millisecond || d > 1200*time.Millisecond {
			t.Fatalf("wait %d out of bounds: %s", i, d)
		}
	}
}
