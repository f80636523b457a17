package bench

import "slices"

// This file holds how a measurement is compared: its ratios to the
// baselines of the same run, and the design's targets (docs/design.md §6)
// it is held against.

// targetSpec is a design target (docs/design.md §6).
type targetSpec struct {
	name string
	// subject is the implementation held to the target: "" for sparkrpc,
	// or one of the baselines (sparkrpc-borrowed) against another.
	subject   string
	baseline  string // "" for an absolute target on a figure
	metric    string // a ratio metric, or an Extra key / "msgs_per_sec" / metricP50 / metricP99 when absolute
	atLeast   bool
	threshold float64
}

// ratios compares f with each baseline that was measured.
func ratios(f *Figures, baselines []Baseline) []Ratio {
	if f == nil || !f.Verified.OK {
		return nil
	}
	var out []Ratio
	for i := range baselines {
		b := &baselines[i]
		bf := verifiedFigures(b)
		if bf == nil {
			continue
		}
		if bf.MsgsPerSec > 0 {
			out = append(out, Ratio{Baseline: b.Name, Metric: "msgs_per_sec", Value: f.MsgsPerSec / bf.MsgsPerSec})
		}
		if f.Latency != nil && bf.Latency != nil && bf.Latency.P50 > 0 && bf.Latency.P99 > 0 {
			out = append(out,
				Ratio{Baseline: b.Name, Metric: "latency_p50", Value: f.Latency.P50 / bf.Latency.P50},
				Ratio{Baseline: b.Name, Metric: "latency_p99", Value: f.Latency.P99 / bf.Latency.P99})
		}
		if f.CPUPerMsg > 0 && bf.CPUPerMsg > 0 {
			out = append(out, Ratio{Baseline: b.Name, Metric: metricCPUPerMsg, Value: f.CPUPerMsg / bf.CPUPerMsg})
		}
	}
	return out
}

// metricCPUPerMsg is the ratio metric of the CPU time a message cost.
const metricCPUPerMsg = "cpu_per_msg"

// The absolute latency metrics a target without a baseline may name: the
// asks' percentiles, in microseconds.
const (
	metricP50 = "p50_us"
	metricP99 = "p99_us"
)

// evalTarget evaluates t on r; runs are sparkrpc's rounds (several with
// Config.Rounds), an absolute target being held against the median of its
// own metric over them.
func evalTarget(t targetSpec, r *Result, runs []*Figures) TargetResult {
	tr := TargetResult{Name: t.name, Baseline: t.baseline, Metric: t.metric, AtLeast: t.atLeast, Threshold: t.threshold}
	if t.subject != "" {
		tr.Value, tr.Measured = baselineRatio(r, t.subject, t.baseline)
	} else if t.baseline != "" {
		tr.Value, tr.Measured = r.Ratio(t.baseline, t.metric)
	} else if len(runs) > 1 {
		var vs []float64
		for _, f := range runs {
			if v, ok := absoluteValue(f, t.metric); ok {
				vs = append(vs, v)
			}
		}
		if len(vs) == len(runs) {
			tr.Value, tr.Measured = medianOf(vs), true
		}
	} else {
		tr.Value, tr.Measured = absoluteValue(r.Figures, t.metric)
	}
	if tr.Measured {
		if t.atLeast {
			tr.Met = tr.Value >= t.threshold
		} else {
			tr.Met = tr.Value <= t.threshold
		}
	}
	return tr
}

// baselineRatio is the msgs/s of the baseline subject over that of the
// baseline base, both measured and verified in r.
func baselineRatio(r *Result, subject, base string) (float64, bool) {
	sf, bf := verifiedFigures(r.Baseline(subject)), verifiedFigures(r.Baseline(base))
	if sf == nil || bf == nil || bf.MsgsPerSec <= 0 {
		return 0, false
	}
	return sf.MsgsPerSec / bf.MsgsPerSec, true
}

// verifiedFigures returns b's figures when b was measured and verified.
func verifiedFigures(b *Baseline) *Figures {
	if b == nil || b.Error != "" || b.Figures == nil || !b.Figures.Verified.OK {
		return nil
	}
	return b.Figures
}

// absoluteValue is the figure of f that an absolute target on metric names.
func absoluteValue(f *Figures, metric string) (float64, bool) {
	if f == nil || !f.Verified.OK {
		return 0, false
	}
	switch l := f.Latency; {
	case metric == "msgs_per_sec":
		return f.MsgsPerSec, true
	case metric == metricP50 && l != nil:
		return l.P50, true
	case metric == metricP99 && l != nil:
		return l.P99, true
	default:
		v, ok := f.Extra[metric]
		return v, ok
	}
}

// medianOf is the median of vs: the mean of the middle two when their
// number is even.
func medianOf(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
