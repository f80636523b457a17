package bench

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// The measured run's garbage collections and CPU time are counted, and
// only the measured run's: the warm-up's are not.
func TestMeasureCountsCollectionsAndCPU(t *testing.T) {
	h := &harness{cfg: Config{Count: 10, WarmupCount: 10}}
	const collections = 3
	runs := 0
	run := func(context.Context, budget) (sample, error) {
		runs++
		if runs == 1 { // the warm-up
			for range 5 {
				runtime.GC()
			}
			return sample{messages: 10, elapsed: time.Millisecond, verified: Verification{OK: true}}, nil
		}
		for range collections {
			runtime.GC()
		}
		// Use some CPU, until the kernel has counted it.
		start, ok := processCPU()
		for ok {
			if now, _ := processCPU(); now-start >= 10*time.Millisecond {
				break
			}
		}
		return sample{messages: 10, elapsed: time.Millisecond, verified: Verification{OK: true}}, nil
	}
	f, err := h.measure(context.Background(), 16, run)
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 {
		t.Fatalf("%d runs, want a warm-up and a measured run", runs)
	}
	// measure collects once before the measured run, which is not its.
	if f.GCCycles < collections || f.GCCycles > collections+1 {
		t.Fatalf("%d collections counted, want %d (the measured run's)", f.GCCycles, collections)
	}
	if _, ok := processCPU(); ok && f.CPUPerMsg < 1000 {
		t.Fatalf("%.1f µs of CPU a message, want at least 1 ms (10 ms over 10 messages)", f.CPUPerMsg)
	}
}
