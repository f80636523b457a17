// Measuring a workload: a warm-up, then the measured run, with the heap's
// allocations, the process's CPU time and the collections around it.

package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// sample is what one run of a workload produced.
type sample struct {
	messages int64
	elapsed  time.Duration
	verified Verification
	hist     *histogram
	extra    map[string]float64
}

// runFunc performs one run of a workload within a budget.
type runFunc func(ctx context.Context, b budget) (sample, error)

// measure runs a warm-up and then the measured run of a workload, with the
// heap's allocations, the process's CPU time and the collections around
// the measured run.
func (h *harness) measure(ctx context.Context, payload int, run runFunc) (*Figures, error) {
	if warm := h.cfg.warmup(); !warm.zero() {
		s, err := run(ctx, warm)
		if err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
		if !s.verified.OK {
			f := &Figures{Messages: s.messages, Verified: s.verified}
			return f, fmt.Errorf("%w in warm-up: %s", ErrVerificationFailed, s.verified)
		}
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0, cpuKnown := processCPU()
	s, err := run(ctx, h.cfg.measured())
	cpu1, _ := processCPU()
	runtime.ReadMemStats(&m1)
	if err != nil {
		return nil, err
	}
	f := &Figures{
		Messages: s.messages,
		Seconds:  s.elapsed.Seconds(),
		Verified: s.verified,
		Extra:    s.extra,
	}
	if s.elapsed > 0 {
		f.MsgsPerSec = float64(s.messages) / s.elapsed.Seconds()
		f.MBPerSec = f.MsgsPerSec * float64(payload) / 1e6
	}
	f.GCCycles = m1.NumGC - m0.NumGC
	if s.messages > 0 {
		f.AllocsPerMsg = float64(m1.Mallocs-m0.Mallocs) / float64(s.messages)
		f.BytesPerMsg = float64(m1.TotalAlloc-m0.TotalAlloc) / float64(s.messages)
		if cpuKnown {
			f.CPUPerMsg = float64(cpu1-cpu0) / float64(time.Microsecond) / float64(s.messages)
		}
	}
	if s.hist != nil {
		f.Latency = s.hist.latency()
	}
	if !f.Verified.OK {
		return f, fmt.Errorf("%w: %s", ErrVerificationFailed, f.Verified)
	}
	return f, nil
}

// measureOnce measures a single run of a workload that has no budget (it
// does a fixed amount of work), without a warm-up.
func (h *harness) measureOnce(ctx context.Context, payload int, run func() (sample, error)) (*Figures, error) {
	saved := h.cfg
	h.cfg.Count, h.cfg.WarmupCount, h.cfg.Warmup = 1, 0, 0
	defer func() { h.cfg = saved }()
	return h.measure(ctx, payload, func(context.Context, budget) (sample, error) { return run() })
}
