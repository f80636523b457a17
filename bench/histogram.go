package bench

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// histogram records latencies in nanoseconds, up to 60 s, with two
// significant digits (1 % resolution). It is not safe for concurrent use:
// each asking goroutine records into its own and the results are merged.
type histogram struct {
	h *hdrhistogram.Histogram
}

const histogramMax = int64(60 * time.Second)

func newHistogram() *histogram {
	return &histogram{h: hdrhistogram.New(1, histogramMax, 2)}
}

func (h *histogram) record(d time.Duration) {
	v := int64(d)
	if v < 1 {
		v = 1
	}
	if v > histogramMax {
		v = histogramMax
	}
	_ = h.h.RecordValue(v) // within range by construction
}

func (h *histogram) reset() { h.h.Reset() }

func (h *histogram) merge(o *histogram) { h.h.Merge(o.h) }

// latency summarises the histogram in microseconds.
func (h *histogram) latency() *Latency {
	if h.h.TotalCount() == 0 {
		return nil
	}
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	return &Latency{
		Count: h.h.TotalCount(),
		P50:   us(h.h.ValueAtQuantile(50)),
		P99:   us(h.h.ValueAtQuantile(99)),
		P999:  us(h.h.ValueAtQuantile(99.9)),
		Max:   us(h.h.Max()),
		Mean:  h.h.Mean() / 1e3,
	}
}
