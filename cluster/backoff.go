package cluster

import (
	"math/rand/v2"
	"time"
)

// backoff computes the waits between the attempts of a retried operation:
// exponential from initial up to max, each randomised by ±jitter (a
// fraction of the wait) so that many clients retrying together spread out.
type backoff struct {
	initial, max time.Duration
	multiplier   float64
	jitter       float64        // 0 ≤ jitter < 1
	rand         func() float64 // in [0, 1); default math/rand/v2
	current      time.Duration
}

// newBackoff returns a backoff starting at initial, doubling up to max,
// with a jitter of 20%.
func newBackoff(initial, max time.Duration) *backoff {
	return &backoff{initial: initial, max: max, multiplier: 2, jitter: 0.2}
}

// next returns the wait before the next attempt.
func (b *backoff) next() time.Duration {
	if b.current == 0 {
		b.current = b.initial
	} else {
		b.current = min(time.Duration(float64(b.current)*b.multiplier), b.max)
	}
	r := b.rand
	if r == nil {
		r = rand.Float64
	}
	d := float64(b.current) * (1 + b.jitter*(2*r()-1))
	return max(time.Duration(d), time.Millisecond)
}
