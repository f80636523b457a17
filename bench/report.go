package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// FormatVersion is the version of the JSON result format that WriteJSON
// writes. ReadJSON accepts only this version.
const FormatVersion = 1

// Report is the full result of one harness run: what ran, on what machine,
// and every figure. It is what `sparkrpc bench --json FILE` writes.
type Report struct {
	// FormatVersion is FormatVersion.
	FormatVersion int `json:"format_version"`
	// Started and Finished bound the run.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Command is the command line that produced the report, when known.
	Command string `json:"command,omitempty"`
	// Machine describes where the run happened.
	Machine Machine `json:"machine"`
	// Config is the configuration the run used.
	Config ConfigRecord `json:"config"`
	// TLS says how the remote scenarios secured their connections when the
	// run used TLS (Config.TLS); nil when it did not.
	TLS *TLSInfo `json:"tls,omitempty"`
	// StolenCPU is the fraction (0 to 1) of the machine's CPU time during
	// the run that its hypervisor gave to other guests (Linux's steal
	// time); nil where the kernel does not report it. On a virtual machine
	// whose CPUs are shared, ratios from a run with much of it spread more
	// between runs.
	StolenCPU *float64 `json:"stolen_cpu,omitempty"`
	// Results holds one entry per scenario variant, in run order.
	Results []Result `json:"results"`
	// Passed is true when every message of every scenario and baseline that
	// ran arrived exactly once (and in order where order is promised) and no
	// scenario failed. Targets that were not met do not fail a run.
	Passed bool `json:"passed"`
}

// ConfigRecord is the part of Config that a report records.
type ConfigRecord struct {
	Scenarios       []string `json:"scenarios"`
	Payloads        []int    `json:"payloads"`
	InFlight        int      `json:"in_flight"`
	Senders         int      `json:"senders"`
	Endpoints       int      `json:"endpoints"`
	LoopEndpoints   int      `json:"loop_endpoints"`
	Count           int64    `json:"count,omitempty"`
	DurationSeconds float64  `json:"duration_seconds,omitempty"`
	WarmupCount     int64    `json:"warmup_count,omitempty"`
	WarmupSeconds   float64  `json:"warmup_seconds,omitempty"`
	Window          int      `json:"window,omitempty"`
	Rounds          int      `json:"rounds,omitempty"`
	Quick           bool     `json:"quick,omitempty"`
	// TLS is true when the remote scenarios ran over TLS (see Report.TLS).
	TLS bool `json:"tls,omitempty"`
}

// Machine describes the machine and build a report was produced on.
type Machine struct {
	GOMAXPROCS  int    `json:"gomaxprocs"`
	NumCPU      int    `json:"num_cpu"`
	CPUModel    string `json:"cpu_model,omitempty"`
	GoVersion   string `json:"go_version"`
	GOOS        string `json:"goos"`
	GOARCH      string `json:"goarch"`
	GitRevision string `json:"git_revision,omitempty"`
	// GitModified is true when the working tree had uncommitted changes.
	GitModified bool   `json:"git_modified,omitempty"`
	Hostname    string `json:"hostname,omitempty"`
	// Scheduling is the process's scheduling policy when it is not the
	// default time-sharing one: "SCHED_FIFO priority 10" for a run under
	// `chrt -f 10`, for example (Linux only). A real-time class changes
	// how soon a woken thread runs, and with it ratios that depend on
	// hand-offs between goroutines, in both directions
	// (docs/performance.md, "The scheduling class of the runs"): compare
	// runs in the same class.
	Scheduling string `json:"scheduling,omitempty"`
}

// Result holds the figures of one scenario variant: sparkrpc's figures, the
// baselines measured in the same run, their ratios and the design targets.
type Result struct {
	// Scenario is the scenario name (see Scenarios).
	Scenario string `json:"scenario"`
	// Params are the variant's parameters.
	Params Params `json:"params"`
	// Impl names the measured side when it is not ImplSparkrpc (the
	// executor-startup scenario measures ImplKubernetes).
	Impl string `json:"impl,omitempty"`
	// Figures are sparkrpc's figures; nil when sparkrpc's side was skipped
	// or failed.
	Figures *Figures `json:"figures,omitempty"`
	// Baselines are the other implementations measured with the same
	// workload in the same run.
	Baselines []Baseline `json:"baselines,omitempty"`
	// Ratios compare Figures with each baseline.
	Ratios []Ratio `json:"ratios,omitempty"`
	// Targets are the design targets that apply to this variant.
	Targets []TargetResult `json:"targets,omitempty"`
	// Skipped says why sparkrpc's side did not run (e.g. a package it needs
	// is not available); baselines may still have run.
	Skipped string `json:"skipped,omitempty"`
	// Error is the failure of sparkrpc's side, when it failed.
	Error string `json:"error,omitempty"`
}

// Params are the parameters of one scenario variant.
type Params struct {
	// Payload is the payload size in bytes of each message.
	Payload int `json:"payload_bytes"`
	// InFlight is the number of asks in flight (asking scenarios).
	InFlight int `json:"in_flight,omitempty"`
	// Senders is the number of concurrent senders.
	Senders int `json:"senders,omitempty"`
	// Endpoints is the number of receiving endpoints.
	Endpoints int `json:"endpoints,omitempty"`
	// Executors is the number of executors (scheduler scenarios).
	Executors int `json:"executors,omitempty"`
	// Loop is "shared" or "dedicated" for the loop scenarios.
	Loop string `json:"loop,omitempty"`
}

// String returns the parameters in a short form for tables.
func (p Params) String() string {
	var parts []string
	if p.Payload > 0 {
		parts = append(parts, formatBytes(p.Payload))
	}
	if p.InFlight > 0 {
		parts = append(parts, fmt.Sprintf("k=%d", p.InFlight))
	}
	if p.Senders > 1 {
		parts = append(parts, fmt.Sprintf("senders=%d", p.Senders))
	}
	if p.Endpoints > 1 {
		parts = append(parts, fmt.Sprintf("endpoints=%d", p.Endpoints))
	}
	if p.Executors > 0 {
		parts = append(parts, fmt.Sprintf("executors=%d", p.Executors))
	}
	if p.Loop != "" {
		parts = append(parts, p.Loop)
	}
	return strings.Join(parts, " ")
}

// Figures are the measurements of one implementation in one variant.
type Figures struct {
	// Messages is the number of messages measured (asks count once).
	Messages int64 `json:"messages"`
	// Seconds is the measured wall time, from the first send to the last
	// arrival (or reply).
	Seconds float64 `json:"seconds"`
	// MsgsPerSec is Messages / Seconds.
	MsgsPerSec float64 `json:"msgs_per_sec"`
	// MBPerSec is the payload throughput in MB (10^6 bytes) per second.
	MBPerSec float64 `json:"mb_per_sec"`
	// Latency is the ask latency distribution; nil for one-way scenarios.
	Latency *Latency `json:"latency,omitempty"`
	// AllocsPerMsg and BytesPerMsg are the heap allocations of the whole
	// process during the measured run divided by Messages (runtime.MemStats).
	AllocsPerMsg float64 `json:"allocs_per_msg"`
	BytesPerMsg  float64 `json:"bytes_per_msg"`
	// CPUPerMsg is the CPU time (user and system) of the whole process
	// during the measured run divided by Messages, in microseconds; 0
	// where the kernel does not report it (outside Unix). On a loaded or
	// shared machine it moves less than the rates, which also count the
	// time the run waited for a processor.
	CPUPerMsg float64 `json:"cpu_us_per_msg,omitempty"`
	// GCCycles is the number of garbage collections the process completed
	// during the measured run. A workload that allocates for every
	// message runs at the pace the collector sets, and that pace depends
	// on the heap the process holds besides (docs/performance.md).
	GCCycles uint32 `json:"gc_cycles"`
	// Verified says whether every message arrived exactly once (and in
	// order where checked).
	Verified Verification `json:"verified"`
	// RoundsMsgsPerSec holds the rate of every round when the variant was
	// measured in several rounds (Config.Rounds); the other figures are
	// those of the median round.
	RoundsMsgsPerSec []float64 `json:"rounds_msgs_per_sec,omitempty"`
	// Extra holds scenario-specific figures (e.g. registration seconds).
	Extra map[string]float64 `json:"extra,omitempty"`
}

// Latency is a latency distribution in microseconds, from an HDR histogram
// with two significant digits (1 % resolution).
type Latency struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_us"`
	P99   float64 `json:"p99_us"`
	P999  float64 `json:"p999_us"`
	Max   float64 `json:"max_us"`
	Mean  float64 `json:"mean_us"`
}

// Verification is the delivery check of a run.
type Verification struct {
	// Sent is the number of messages sent.
	Sent int64 `json:"sent"`
	// Received is the number of messages (or replies) that arrived.
	Received int64 `json:"received"`
	// Lost is the number of sent messages that never arrived.
	Lost int64 `json:"lost"`
	// Duplicates counts messages that arrived more than once.
	Duplicates int64 `json:"duplicates"`
	// Reordered counts messages that arrived out of their sender's order.
	Reordered int64 `json:"reordered"`
	// Unknown counts messages that no sender sent (or mismatched replies).
	Unknown int64 `json:"unknown"`
	// Ordered is true when the order was checked.
	Ordered bool `json:"ordered"`
	// OK is true when nothing was lost, duplicated, reordered or unknown.
	OK bool `json:"ok"`
}

// String describes the verification briefly.
func (v Verification) String() string {
	if v.OK {
		if v.Ordered {
			return fmt.Sprintf("ok %d in order", v.Received)
		}
		return fmt.Sprintf("ok %d", v.Received)
	}
	return fmt.Sprintf("FAILED sent=%d received=%d lost=%d dup=%d reordered=%d unknown=%d",
		v.Sent, v.Received, v.Lost, v.Duplicates, v.Reordered, v.Unknown)
}

// Baseline holds the figures of another implementation under the same
// workload.
type Baseline struct {
	// Name is the implementation: "protoactor" (raw protoactor-go, local),
	// "protoactor-remote" (protoactor-go's gRPC remote), "tcp" (a raw
	// length-prefixed TCP stream: the ceiling), or "sparkrpc-shared".
	Name    string   `json:"name"`
	Figures *Figures `json:"figures,omitempty"`
	// Skipped says why the baseline did not run, if it did not.
	Skipped string `json:"skipped,omitempty"`
	// Error is the baseline's failure, when it failed.
	Error string `json:"error,omitempty"`
}

// Ratio compares sparkrpc with one baseline on one metric. With several
// rounds (Config.Rounds) it is the median of the per-round ratios.
type Ratio struct {
	Baseline string `json:"baseline"`
	// Metric is "msgs_per_sec" (sparkrpc / baseline: higher is better),
	// "latency_p50" / "latency_p99" (sparkrpc / baseline: lower is better)
	// or "cpu_per_msg" (the CPU time a message cost, sparkrpc / baseline:
	// lower is better).
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
}

// TargetResult is one design target and whether this run met it.
type TargetResult struct {
	// Name describes the target, e.g. "≥ 0.95× protoactor msgs/s".
	Name string `json:"name"`
	// Baseline is the baseline it compares with ("" for absolute targets).
	Baseline string `json:"baseline,omitempty"`
	// Metric is the ratio metric, or an absolute metric for targets without
	// a baseline.
	Metric string `json:"metric"`
	// AtLeast is true when Value must be ≥ Threshold, false when ≤.
	AtLeast   bool    `json:"at_least"`
	Threshold float64 `json:"threshold"`
	// Value is the measured ratio or figure; Measured is false when it could
	// not be measured in this run.
	Value    float64 `json:"value"`
	Measured bool    `json:"measured"`
	Met      bool    `json:"met"`
}

// Key identifies a scenario variant across runs (for Compare).
func (r *Result) Key() string { return r.Scenario + " " + r.Params.String() }

// Baseline returns the baseline named name, or nil.
func (r *Result) Baseline(name string) *Baseline {
	for i := range r.Baselines {
		if r.Baselines[i].Name == name {
			return &r.Baselines[i]
		}
	}
	return nil
}

// Ratio returns the ratio to baseline on metric, if measured.
func (r *Result) Ratio(baseline, metric string) (float64, bool) {
	for _, x := range r.Ratios {
		if x.Baseline == baseline && x.Metric == metric {
			return x.Value, true
		}
	}
	return 0, false
}

// Failed reports whether the result shows a failure: an error, or a lost,
// duplicated or reordered message, on sparkrpc's side or a baseline's.
func (r *Result) Failed() bool {
	if r.Error != "" {
		return true
	}
	if r.Figures != nil && !r.Figures.Verified.OK {
		return true
	}
	for _, b := range r.Baselines {
		if b.Error != "" || (b.Figures != nil && !b.Figures.Verified.OK) {
			return true
		}
	}
	return false
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("bench: encode report: %w", err)
	}
	return nil
}

// WriteJSONFile writes the report to the file path.
func (rep *Report) WriteJSONFile(path string) error {
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("bench: write report: %w", err)
	}
	return nil
}

// ReadJSON reads a report written by WriteJSON. A document that is not such a
// report returns an error wrapping ErrBadReport.
func ReadJSON(r io.Reader) (*Report, error) {
	var rep Report
	dec := json.NewDecoder(r)
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadReport, err)
	}
	if rep.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("%w: format version %d, want %d", ErrBadReport, rep.FormatVersion, FormatVersion)
	}
	return &rep, nil
}

// ReadJSONFile reads the report in the file path.
func ReadJSONFile(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bench: read report: %w", err)
	}
	defer f.Close()
	rep, err := ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}

// CollectMachine describes the current machine and build: GOMAXPROCS, the
// CPU model from /proc/cpuinfo when present, the Go version, the scheduling
// class when it is not the default, and the git
// revision from the build info or, failing that, from `git rev-parse HEAD`
// in the working directory.
func CollectMachine() Machine {
	m := Machine{
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		NumCPU:     runtime.NumCPU(),
		CPUModel:   cpuModel(),
		GoVersion:  runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		Scheduling: schedulingClass(),
	}
	m.Hostname, _ = os.Hostname()
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				m.GitRevision = s.Value
			case "vcs.modified":
				m.GitModified = s.Value == "true"
			}
		}
	}
	if m.GitRevision == "" {
		if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
			m.GitRevision = strings.TrimSpace(string(out))
			if err := exec.Command("git", "diff", "--quiet", "HEAD").Run(); err != nil {
				m.GitModified = true
			}
		}
	}
	return m
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func formatBytes(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	default:
		return fmt.Sprintf("%dB", n)
	}
}
