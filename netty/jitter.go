// The transport's one random choice: the jitter of its reconnect backoff.

package netty

import (
	"math/rand/v2"
	"sync"
)

// WithRand sets the transport's source of random choices: the jitter of
// the reconnect backoff window that follows a failed connect. The default
// is the process's random source. A simulator gives a seeded one, so that
// one seed makes the same choices every run. The transport uses it under a
// lock of its own.
func WithRand(r *rand.Rand) Option { return optionFunc(func(o *options) { o.rand = r }) }

// jitterSource draws the backoff's jitter from WithRand's source, or the
// process's.
type jitterSource struct {
	mu sync.Mutex
	r  *rand.Rand
}

// float64 returns a number in [0, 1).
func (j *jitterSource) float64() float64 {
	if j.r == nil {
		return rand.Float64()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.r.Float64()
}
