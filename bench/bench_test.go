package bench_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/bench"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// smallConfig is a configuration with small counts, smaller under the race
// detector.
func smallConfig(scenarios ...string) bench.Config {
	cfg := bench.QuickConfig()
	cfg.Scenarios = scenarios
	cfg.Count, cfg.WarmupCount = 2000, 100
	cfg.Endpoints = 200
	if testutil.RaceEnabled {
		cfg.Count = 300
		cfg.Payloads = []int{16, 1 << 10}
	}
	return cfg
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(c *bench.Config)
		want   error
	}{
		{"default", func(*bench.Config) {}, nil},
		{"unknown scenario", func(c *bench.Config) { c.Scenarios = []string{"local-send", "warp-drive"} }, bench.ErrUnknownScenario},
		{"negative count", func(c *bench.Config) { c.Count = -1 }, bench.ErrInvalidConfig},
		{"no count and no duration", func(c *bench.Config) { c.Count, c.Duration = 0, 0 }, bench.ErrInvalidConfig},
		{"zero in flight", func(c *bench.Config) { c.InFlight = 0 }, bench.ErrInvalidConfig},
		{"zero senders", func(c *bench.Config) { c.Senders = 0 }, bench.ErrInvalidConfig},
		{"one endpoint", func(c *bench.Config) { c.Endpoints = 1 }, bench.ErrInvalidConfig},
		{"zero payload", func(c *bench.Config) { c.Payloads = []int{16, 0} }, bench.ErrInvalidConfig},
		{"no payloads", func(c *bench.Config) { c.Payloads = nil }, bench.ErrInvalidConfig},
		{"negative warm-up", func(c *bench.Config) { c.Warmup = -time.Second }, bench.ErrInvalidConfig},
		{"negative rounds", func(c *bench.Config) { c.Rounds = -1 }, bench.ErrInvalidConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := bench.DefaultConfig()
			tc.modify(&cfg)
			err := cfg.Validate()
			if tc.want == nil && err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("Validate: %v, want %v", err, tc.want)
			}
			if tc.want != nil {
				if _, err := bench.Run(context.Background(), cfg); !errors.Is(err, tc.want) {
					t.Fatalf("Run: %v, want %v", err, tc.want)
				}
			}
		})
	}
}

func TestReadJSONRejectsOtherDocuments(t *testing.T) {
	for _, doc := range []string{"", "not json", `{"format_version": 99}`, `[1, 2]`} {
		if _, err := bench.ReadJSON(strings.NewReader(doc)); !errors.Is(err, bench.ErrBadReport) {
			t.Errorf("ReadJSON(%q) = %v, want ErrBadReport", doc, err)
		}
	}
	if _, err := bench.ReadJSONFile(t.TempDir() + "/missing.json"); err == nil {
		t.Error("ReadJSONFile of a missing file succeeded")
	}
}

// Run measures sparkrpc and its baselines, verifies every message, and the
// report survives a JSON round trip and renders as a table.
func TestRunReportsVerifiedFigures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := smallConfig(bench.ScenarioLocalSend, bench.ScenarioLocalAsk, bench.ScenarioRemoteAsk)
	cfg.Payloads = []int{16}
	var steps []bench.Progress
	rep, err := bench.Run(ctx, cfg, bench.WithProgress(func(p bench.Progress) { steps = append(steps, p) }))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !rep.Passed {
		t.Fatal("report not passed")
	}
	// local-send: 1 sender and 4 senders; local-ask: k=1 and k=64;
	// remote-ask 16 B: k=1 and k=64.
	if len(rep.Results) != 6 {
		t.Fatalf("%d results, want 6", len(rep.Results))
	}
	if last := steps[len(steps)-1]; !last.Done || last.Step != last.Steps {
		t.Fatalf("last progress %+v is not the end", last)
	}
	for _, r := range rep.Results {
		if r.Figures == nil {
			t.Fatalf("%s: no sparkrpc figures (skipped %q, error %q)", r.Key(), r.Skipped, r.Error)
		}
		if v := r.Figures.Verified; !v.OK || v.Received != cfg.Count || v.Sent != cfg.Count || !v.Ordered {
			t.Fatalf("%s: verification %+v, want %d in order", r.Key(), v, cfg.Count)
		}
		if r.Figures.MsgsPerSec <= 0 || r.Figures.Seconds <= 0 {
			t.Fatalf("%s: figures %+v", r.Key(), r.Figures)
		}
		if (r.Params.InFlight > 0) != (r.Figures.Latency != nil) {
			t.Fatalf("%s: latency %+v for in-flight %d", r.Key(), r.Figures.Latency, r.Params.InFlight)
		}
		if cpuReported() && r.Figures.CPUPerMsg <= 0 {
			t.Fatalf("%s: no CPU time a message (%v)", r.Key(), r.Figures.CPUPerMsg)
		}
		for _, b := range r.Baselines {
			if b.Skipped != "" {
				continue
			}
			if b.Figures == nil || !b.Figures.Verified.OK || b.Figures.Verified.Received != cfg.Count {
				t.Fatalf("%s %s: baseline %+v", r.Key(), b.Name, b)
			}
			if _, ok := r.Ratio(b.Name, "msgs_per_sec"); !ok {
				t.Fatalf("%s: no ratio to %s", r.Key(), b.Name)
			}
			if v, ok := r.Ratio(b.Name, "cpu_per_msg"); cpuReported() && (!ok || v <= 0) {
				t.Fatalf("%s: CPU ratio to %s is %v, %v", r.Key(), b.Name, v, ok)
			}
		}
	}
	if got := rep.Results[0].Targets; len(got) != 1 || got[0].Baseline != bench.ImplProtoactor || !got[0].Measured {
		t.Fatalf("local-send targets %+v", got)
	}

	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := bench.ReadJSON(&buf)
	if err != nil {
		t.Fatalf("ReadJSON: %v", err)
	}
	if len(back.Results) != len(rep.Results) || back.Machine.GOMAXPROCS <= 0 || back.Machine.GoVersion == "" {
		t.Fatalf("round trip lost data: %+v", back.Machine)
	}
	if back.Results[3].Figures.Latency.P99 != rep.Results[3].Figures.Latency.P99 {
		t.Fatal("round trip changed a latency")
	}
	if runtime.GOOS == "linux" {
		// The kernel reports steal time: the run records it, and the
		// table shows it.
		if rep.StolenCPU == nil || *rep.StolenCPU < 0 || *rep.StolenCPU > 1 {
			t.Fatalf("stolen CPU %v, want a fraction", rep.StolenCPU)
		}
		if back.StolenCPU == nil || *back.StolenCPU != *rep.StolenCPU {
			t.Fatalf("round trip changed the stolen CPU: %v", back.StolenCPU)
		}
	}

	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"local-send", "remote-ask", "protoactor", "tcp", "Targets", "≥ 0.95× protoactor Send msgs/s", "CPU µs/MSG", "GCs", "CPU ÷"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if want := "taken by the hypervisor"; (rep.StolenCPU != nil) != strings.Contains(table.String(), want) {
		t.Errorf("the table shows the stolen CPU if and only if the report has it (%v):\n%s", rep.StolenCPU, table.String())
	}
	var cmp bytes.Buffer
	if err := rep.WriteComparison(&cmp, back); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cmp.String(), "+0.0%") {
		t.Errorf("comparison with itself shows no +0.0%% change:\n%s", cmp.String())
	}
}

// With several rounds, every implementation is measured each round and the
// median round is reported.
func TestRunRounds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := smallConfig(bench.ScenarioLocalSend)
	cfg.Senders = 1
	cfg.Rounds = 3
	var done []bench.Progress
	rep, err := bench.Run(ctx, cfg, bench.WithProgress(func(p bench.Progress) {
		if p.Done {
			done = append(done, p)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 6 || done[5].Steps != 6 || done[5].Round != 3 {
		t.Fatalf("progress %+v, want 6 measurements in 3 rounds", done)
	}
	r := rep.Results[0]
	for _, f := range []*bench.Figures{r.Figures, r.Baselines[0].Figures} {
		if len(f.RoundsMsgsPerSec) != 3 || !f.Verified.OK {
			t.Fatalf("figures %+v, want 3 verified rounds", f)
		}
		lower, higher := 0, 0
		for _, v := range f.RoundsMsgsPerSec {
			if v < f.MsgsPerSec {
				lower++
			} else if v > f.MsgsPerSec {
				higher++
			}
		}
		if lower > 1 || higher > 1 {
			t.Fatalf("%v msg/s is not the median of %v", f.MsgsPerSec, f.RoundsMsgsPerSec)
		}
	}
	// The ratio is the median of the per-round ratios: within the range of
	// the per-round ratios.
	ratio, ok := r.Ratio(bench.ImplProtoactor, "msgs_per_sec")
	if !ok {
		t.Fatal("no ratio")
	}
	lo, hi := 1e18, 0.0
	for i, v := range r.Figures.RoundsMsgsPerSec {
		x := v / r.Baselines[0].Figures.RoundsMsgsPerSec[i]
		lo, hi = min(lo, x), max(hi, x)
	}
	if ratio < lo || ratio > hi {
		t.Fatalf("ratio %v outside the per-round ratios [%v, %v]", ratio, lo, hi)
	}
}

func TestMeasureOne(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := smallConfig()
	p := bench.Variants(cfg, bench.ScenarioManyEndpoints)[0]
	for _, impl := range []string{bench.ImplSparkrpc, bench.ImplProtoactor} {
		f, err := bench.MeasureOne(ctx, cfg, bench.ScenarioManyEndpoints, impl, p)
		if err != nil {
			t.Fatalf("%s: %v", impl, err)
		}
		// Every pair plays whole rounds, so at least Count messages.
		if !f.Verified.OK || f.Messages < cfg.Count || f.Verified.Received != f.Messages {
			t.Fatalf("%s: figures %+v", impl, f)
		}
	}
	if _, err := bench.MeasureOne(ctx, cfg, "warp-drive", bench.ImplSparkrpc, p); !errors.Is(err, bench.ErrUnknownScenario) {
		t.Fatalf("unknown scenario: %v", err)
	}
	if _, err := bench.MeasureOne(ctx, cfg, bench.ScenarioLocalSend, "carrier-pigeon", p); !errors.Is(err, bench.ErrUnknownScenario) {
		t.Fatalf("unknown implementation: %v", err)
	}
}

func TestScenariosListed(t *testing.T) {
	names := bench.ScenarioNames()
	infos := bench.Scenarios()
	if len(names) != len(infos) || len(names) < 8 {
		t.Fatalf("names %v, infos %d", names, len(infos))
	}
	for i, info := range infos {
		if info.Name != names[i] || info.Description == "" {
			t.Fatalf("scenario %d: %+v", i, info)
		}
	}
}

// The driver scenarios verify every message of sparkrpc and of the raw TCP
// baseline: 32 senders' orders at one endpoint, and the asks and the flood
// beside them on one connection (a flood message lost fails the run).
func TestDriverScenariosVerify(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := smallConfig(bench.ScenarioRemoteFanIn, bench.ScenarioRemoteAskUnderFlood)
	cfg.Payloads = []int{16}
	cfg.Window = 256
	for _, name := range cfg.Scenarios {
		for _, p := range bench.Variants(cfg, name) {
			for _, impl := range []string{bench.ImplSparkrpc, bench.ImplTCP} {
				f, err := bench.MeasureOne(ctx, cfg, name, impl, p)
				if err != nil {
					t.Fatalf("%s %v %s: %v", name, p, impl, err)
				}
				if v := f.Verified; !v.OK || v.Sent != cfg.Count || v.Received != cfg.Count || !v.Ordered {
					t.Fatalf("%s %v %s: verification %+v, want %d in order", name, p, impl, v, cfg.Count)
				}
				if name == bench.ScenarioRemoteAskUnderFlood {
					if f.Latency == nil || f.Extra["flood_messages"] <= 0 {
						t.Fatalf("%s %s: latency %v, extra %v", name, impl, f.Latency, f.Extra)
					}
				}
			}
		}
	}
}

// The empty-tasks scenario runs every task exactly once on sparkrpc's
// scheduler backend and on its raw TCP baseline, and reports a ratio
// between them.
func TestEmptyTasksScenarioVerifies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := smallConfig(bench.ScenarioEmptyTasks)
	cfg.Rounds = 1
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("%d results, want 1", len(rep.Results))
	}
	r := rep.Results[0]
	tcp, delivered := r.Baseline(bench.ImplTCP), r.Baseline(bench.ImplTCPDelivered)
	if r.Figures == nil || tcp == nil || tcp.Figures == nil || delivered == nil || delivered.Figures == nil {
		t.Fatalf("figures %+v, tcp baseline %+v, tcp-delivered baseline %+v", r.Figures, tcp, delivered)
	}
	for name, f := range map[string]*bench.Figures{bench.ImplSparkrpc: r.Figures, bench.ImplTCP: tcp.Figures, bench.ImplTCPDelivered: delivered.Figures} {
		if v := f.Verified; !v.OK || v.Sent != cfg.Count || v.Received != cfg.Count || !v.Ordered {
			t.Errorf("%s: verification %+v, want %d tasks, their order checked", name, v, cfg.Count)
		}
		if f.Extra["executors"] != 4 || f.MsgsPerSec <= 0 {
			t.Errorf("%s: figures %+v", name, f)
		}
	}
	if x, ok := r.Ratio(bench.ImplTCP, "msgs_per_sec"); !ok || x <= 0 {
		t.Errorf("ratio to tcp %v, measured %v", x, ok)
	}
}

// The event log's scenario runs every task exactly once with the event log
// and without it, writes the log without dropping, and reports the ratio.
func TestEmptyTasksEventLogScenarioVerifies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := smallConfig(bench.ScenarioEmptyTasksEventLog)
	cfg.Rounds = 1
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	r := rep.Results[0]
	without := r.Baseline(bench.ImplSparkrpcNoEventLog)
	if r.Figures == nil || without == nil || without.Figures == nil {
		t.Fatalf("figures %+v, baseline %+v", r.Figures, without)
	}
	for name, f := range map[string]*bench.Figures{bench.ImplSparkrpc: r.Figures, bench.ImplSparkrpcNoEventLog: without.Figures} {
		if v := f.Verified; !v.OK || v.Sent != cfg.Count || v.Received != cfg.Count {
			t.Errorf("%s: verification %+v, want %d tasks", name, v, cfg.Count)
		}
	}
	if d, ok := r.Figures.Extra["eventlog_dropped"]; !ok || d != 0 {
		t.Errorf("eventlog_dropped = %v (%v), want 0", d, ok)
	}
	if x, ok := r.Ratio(bench.ImplSparkrpcNoEventLog, "msgs_per_sec"); !ok || x <= 0 {
		t.Errorf("ratio %v, measured %v", x, ok)
	}
}

// The delivered TCP baseline of remote-send gets every message, in order,
// for each payload size.
func TestTCPDeliveredVerifies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := smallConfig(bench.ScenarioRemoteSend)
	for _, p := range bench.Variants(cfg, bench.ScenarioRemoteSend) {
		f, err := bench.MeasureOne(ctx, cfg, bench.ScenarioRemoteSend, bench.ImplTCPDelivered, p)
		if err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		if v := f.Verified; !v.OK || v.Sent != cfg.Count || v.Received != cfg.Count || !v.Ordered {
			t.Fatalf("%v: verification %+v, want %d in order", p, v, cfg.Count)
		}
		if f.AllocsPerMsg < 2 {
			t.Fatalf("%v: %.2f allocations per message, want at least 2: the sender's message and the new one it is decoded into", p, f.AllocsPerMsg)
		}
	}
}

// cpuReported says whether the process's CPU time is known here (see
// Figures.CPUPerMsg): every Unix kernel reports it.
func cpuReported() bool {
	switch runtime.GOOS {
	case "windows", "plan9", "js", "wasip1":
		return false
	}
	return true
}
