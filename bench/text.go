package bench

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WriteTable writes the report as a readable table: one row for sparkrpc and
// one per baseline in each scenario variant, with sparkrpc's ratio to that
// baseline, then the design targets with met / not met.
func (rep *Report) WriteTable(w io.Writer) error {
	m := rep.Machine
	fmt.Fprintf(w, "sparkrpc bench %s  %s  GOMAXPROCS=%d  cpu %q  rev %s\n",
		rep.Started.Format("2006-01-02 15:04 MST"), m.GoVersion, m.GOMAXPROCS, m.CPUModel, shortRev(m))
	if f := rep.StolenCPU; f != nil {
		fmt.Fprintf(w, "CPU time taken by the hypervisor during the run (steal): %.1f%%\n", 100**f)
	}
	if c := m.Scheduling; c != "" {
		fmt.Fprintf(w, "Scheduling class: %s, not the default: ratios differ from runs in the default class\n", c)
	}
	fmt.Fprintln(w)
	if line := rep.tlsLine(); line != "" {
		fmt.Fprintf(w, "%s\n\n", line)
	}
	t := &table{align: "lllrrrrrrrrrrrrrl"}
	t.add("SCENARIO", "PARAMS", "IMPL", "MSG/S", "MB/S", "P50 µs", "P99 µs", "P99.9 µs", "ALLOCS/MSG", "B/MSG",
		"CPU µs/MSG", "GCs", "SPARKRPC ÷ IMPL", "P50 ÷", "CPU ÷", "CHECKED")
	for i := range rep.Results {
		r := &rep.Results[i]
		note := r.Error
		if r.Skipped != "" {
			note = "skipped: " + r.Skipped
		}
		name := ImplSparkrpc
		if r.Impl != "" {
			name = r.Impl
		}
		t.addResultRow(r, true, name, r.Figures, note)
		for _, b := range r.Baselines {
			note := b.Error
			if b.Skipped != "" {
				note = "skipped: " + b.Skipped
			}
			t.addResultRow(r, false, b.Name, b.Figures, note)
		}
	}
	if err := t.write(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "CHECKED: messages (or replies) that arrived, each exactly once and in its sender's order.")
	if err := rep.writeStartup(w); err != nil {
		return err
	}
	return rep.writeTargets(w)
}

// addResultRow adds the row of one implementation of r: the first
// (sparkrpc's) names the scenario and its parameters, a baseline's gives
// sparkrpc's ratios to it.
func (t *table) addResultRow(r *Result, first bool, name string, f *Figures, note string) {
	scen, params := "", ""
	if first {
		scen, params = r.Scenario, r.Params.String()
	}
	ratio, p50Ratio, cpuRatio := "", "", ""
	if !first {
		ratio, p50Ratio, cpuRatio = "-", "-", "-"
		if v, ok := r.Ratio(name, "msgs_per_sec"); ok {
			ratio = fmtRatio(v)
		}
		if v, ok := r.Ratio(name, "latency_p50"); ok {
			p50Ratio = fmtRatio(v)
		} else if f == nil || f.Latency == nil {
			p50Ratio = ""
		}
		if v, ok := r.Ratio(name, metricCPUPerMsg); ok {
			cpuRatio = fmtRatio(v)
		}
	}
	if f == nil || (f.Messages == 0 && note != "") {
		t.add(scen, params, name, "-", "-", "-", "-", "-", "-", "-", "-", "-", ratio, p50Ratio, cpuRatio, note)
		return
	}
	p50, p99, p999 := "-", "-", "-"
	if f.Latency != nil {
		p50, p99, p999 = fmtFloat(f.Latency.P50), fmtFloat(f.Latency.P99), fmtFloat(f.Latency.P999)
	}
	check := fmtInt(float64(f.Verified.Received)) + " ok"
	if !f.Verified.OK {
		check = f.Verified.String()
	}
	if note != "" {
		check = note
	}
	cpu := "-"
	if f.CPUPerMsg > 0 {
		cpu = fmtFloat(f.CPUPerMsg)
	}
	t.add(scen, params, name, fmtInt(f.MsgsPerSec), fmtFloat(f.MBPerSec), p50, p99, p999,
		fmtFloat(f.AllocsPerMsg), fmtInt(f.BytesPerMsg), cpu, strconv.FormatUint(uint64(f.GCCycles), 10),
		ratio, p50Ratio, cpuRatio, check)
}

// tlsLine says which scenarios ran over TLS and how, or "" for a run
// without TLS.
func (rep *Report) tlsLine() string {
	if !rep.Config.TLS {
		return ""
	}
	ti := rep.TLS
	if ti == nil {
		return "TLS: on (no details recorded)"
	}
	if len(ti.Scenarios) == 0 {
		return "TLS: on, but no scenario of this run uses it (only the remote scenarios do)"
	}
	mutual := ""
	if ti.Mutual {
		mutual = "mutual, "
	}
	return fmt.Sprintf("TLS: %s over TLS for sparkrpc and every baseline (%s%s; the bench's own handshake negotiated %s, %s); other scenarios in plaintext",
		strings.Join(ti.Scenarios, ", "), mutual, ti.Certificate, ti.Version, ti.CipherSuite)
}

// table aligns columns: align holds 'l' or 'r' per column.
type table struct {
	align string
	rows  [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) error {
	widths := make([]int, len(t.align))
	for _, row := range t.rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, row := range t.rows {
		b.Reset()
		for i, c := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if t.align[i] == 'r' {
				b.WriteString(pad + c)
			} else if i < len(row)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " ")); err != nil {
			return err
		}
	}
	return nil
}

func (rep *Report) writeTargets(w io.Writer) error {
	var any bool
	for _, r := range rep.Results {
		any = any || len(r.Targets) > 0
	}
	if !any {
		return nil
	}
	fmt.Fprintln(w, "\nTargets (docs/design.md §6):")
	t := &table{align: "lllrl"}
	t.add("SCENARIO", "PARAMS", "TARGET", "MEASURED", "RESULT")
	for _, r := range rep.Results {
		for _, tg := range r.Targets {
			measured, result := "-", "not measured"
			if tg.Measured {
				if tg.Baseline != "" {
					measured = fmtRatio(tg.Value)
				} else {
					measured = fmtFloat(tg.Value)
				}
				result = "not met"
				if tg.Met {
					result = "met"
				}
			} else if r.Skipped != "" {
				result = "not measured (" + r.Skipped + ")"
			}
			t.add(r.Scenario, r.Params.String(), tg.Name, measured, result)
		}
	}
	return t.write(w)
}

// WriteComparison writes the change from old to rep for every scenario
// variant and implementation present in both: messages per second, p50
// latency for asks, and sparkrpc's ratio to each baseline.
func (rep *Report) WriteComparison(w io.Writer, old *Report) error {
	rep.writeComparisonHeader(w, old)
	oldByKey := make(map[string]*Result)
	for i := range old.Results {
		oldByKey[old.Results[i].Key()] = &old.Results[i]
	}
	t := &table{align: "lllrrrrrrrr"}
	t.add("SCENARIO", "PARAMS", "IMPL", "OLD MSG/S", "NEW MSG/S", "CHANGE", "OLD P50 µs", "NEW P50 µs", "CHANGE", "OLD RATIO", "NEW RATIO")
	matched := 0
	for i := range rep.Results {
		r := &rep.Results[i]
		o, ok := oldByKey[r.Key()]
		if !ok {
			continue
		}
		matched++
		first := true
		line := func(name string, nf, of *Figures, ratioOld, ratioNew string) {
			scen, params := "", ""
			if first {
				scen, params = r.Scenario, r.Params.String()
				first = false
			}
			oldMsgs, newMsgs, chMsgs := "-", "-", "-"
			oldP50, newP50, chP50 := "-", "-", "-"
			if of != nil {
				oldMsgs = fmtInt(of.MsgsPerSec)
			}
			if nf != nil {
				newMsgs = fmtInt(nf.MsgsPerSec)
			}
			if of != nil && nf != nil && of.MsgsPerSec > 0 {
				chMsgs = fmtChange(nf.MsgsPerSec / of.MsgsPerSec)
			}
			if of != nil && of.Latency != nil {
				oldP50 = fmtFloat(of.Latency.P50)
			}
			if nf != nil && nf.Latency != nil {
				newP50 = fmtFloat(nf.Latency.P50)
			}
			if of != nil && nf != nil && of.Latency != nil && nf.Latency != nil && of.Latency.P50 > 0 {
				chP50 = fmtChange(nf.Latency.P50 / of.Latency.P50)
			}
			t.add(scen, params, name, oldMsgs, newMsgs, chMsgs, oldP50, newP50, chP50, ratioOld, ratioNew)
		}
		line(ImplSparkrpc, r.Figures, o.Figures, "", "")
		for _, b := range r.Baselines {
			var of *Figures
			if ob := o.Baseline(b.Name); ob != nil {
				of = ob.Figures
			}
			ro, rn := "-", "-"
			if v, ok := o.Ratio(b.Name, "msgs_per_sec"); ok {
				ro = fmtRatio(v)
			}
			if v, ok := r.Ratio(b.Name, "msgs_per_sec"); ok {
				rn = fmtRatio(v)
			}
			line(b.Name, b.Figures, of, ro, rn)
		}
	}
	if err := t.write(w); err != nil {
		return err
	}
	if matched == 0 {
		fmt.Fprintln(w, "(no scenario variant of this run is in the earlier one)")
	}
	return nil
}

// writeComparisonHeader writes the title of a comparison of rep with old,
// and a note for each way the two runs differ that moves their figures:
// the machine, the scheduling class, TLS.
func (rep *Report) writeComparisonHeader(w io.Writer, old *Report) {
	fmt.Fprintf(w, "\nChange against %s (rev %s) -> %s (rev %s):\n",
		old.Started.Format("2006-01-02 15:04 MST"), shortRev(old.Machine),
		rep.Started.Format("2006-01-02 15:04 MST"), shortRev(rep.Machine))
	if old.Machine.CPUModel != rep.Machine.CPUModel || old.Machine.GOMAXPROCS != rep.Machine.GOMAXPROCS {
		fmt.Fprintf(w, "note: different machines (%q, GOMAXPROCS=%d vs %q, GOMAXPROCS=%d): compare the ratios, not the absolute figures\n",
			old.Machine.CPUModel, old.Machine.GOMAXPROCS, rep.Machine.CPUModel, rep.Machine.GOMAXPROCS)
	}
	if old.Machine.Scheduling != rep.Machine.Scheduling {
		fmt.Fprintf(w, "note: scheduling class %s in the earlier run, %s in this one: ratios that depend on hand-offs differ between classes\n",
			schedulingName(old.Machine.Scheduling), schedulingName(rep.Machine.Scheduling))
	}
	if old.Config.TLS != rep.Config.TLS {
		fmt.Fprintf(w, "note: TLS %s in the earlier run, %s in this one: the remote scenarios' figures differ by what TLS costs\n",
			onOff(old.Config.TLS), onOff(rep.Config.TLS))
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// schedulingName names a Machine.Scheduling, "" being the default class.
func schedulingName(c string) string {
	if c == "" {
		return "default"
	}
	return c
}

func shortRev(m Machine) string {
	rev := m.GitRevision
	if rev == "" {
		return "unknown"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if m.GitModified {
		rev += "+modified"
	}
	return rev
}

// fmtInt formats a figure as an integer with thousands separators.
func fmtInt(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtFloat formats a figure with three significant digits (at least one
// decimal below 100).
func fmtFloat(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case v >= 1000:
		return fmtInt(v)
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func fmtRatio(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "×" }

func fmtChange(r float64) string {
	return fmt.Sprintf("%+.1f%%", (r-1)*100)
}
