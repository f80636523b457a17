package bench_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/bench"
)

// The micro benchmarks run the harness's scenarios with b.N messages, for
// go test -bench and benchstat. Each sub-benchmark is one implementation
// (sparkrpc or a baseline) of one scenario variant; ns/op, B/op and
// allocs/op are per message, measured from the first send to the last
// arrival (setup excluded); asks add p50-µs and p99-µs.

func benchmarkScenario(b *testing.B, scenario string, cfg bench.Config) {
	for _, p := range bench.Variants(cfg, scenario) {
		b.Run(paramName(p), func(b *testing.B) {
			impls := []string{bench.ImplSparkrpc}
			for _, info := range bench.Scenarios() {
				if info.Name == scenario {
					impls = append(impls, info.Baselines...)
				}
			}
			for _, impl := range impls {
				b.Run(impl, func(b *testing.B) { measureB(b, cfg, scenario, impl, p) })
			}
		})
	}
}

func paramName(p bench.Params) string {
	s := fmt.Sprintf("payload=%d", p.Payload)
	if p.InFlight > 0 {
		s += fmt.Sprintf("/inflight=%d", p.InFlight)
	}
	if p.Senders > 1 {
		s += fmt.Sprintf("/senders=%d", p.Senders)
	}
	if p.Endpoints > 1 {
		s += fmt.Sprintf("/endpoints=%d", p.Endpoints)
	}
	if p.Executors > 0 {
		s += fmt.Sprintf("/executors=%d", p.Executors)
	}
	if p.Loop != "" {
		s += "/loop=" + p.Loop
	}
	return s
}

func measureB(b *testing.B, cfg bench.Config, scenario, impl string, p bench.Params) {
	b.ReportAllocs()
	cfg.Count = int64(b.N)
	cfg.WarmupCount = min(int64(b.N)/10, 10000)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	f, err := bench.MeasureOne(ctx, cfg, scenario, impl, p)
	if errors.Is(err, bench.ErrUnavailable) {
		b.Skip(err)
	}
	if err != nil {
		b.Fatal(err)
	}
	if !f.Verified.OK {
		b.Fatalf("verification failed: %s", f.Verified)
	}
	n := float64(f.Messages)
	b.ReportMetric(f.Seconds*1e9/n, "ns/op")
	b.ReportMetric(f.AllocsPerMsg, "allocs/op")
	b.ReportMetric(f.BytesPerMsg, "B/op")
	b.ReportMetric(f.MBPerSec, "MB/s")
	if f.CPUPerMsg > 0 {
		// The process's CPU time a message, which moves less than the
		// time on a busy machine, and the collections during the run.
		b.ReportMetric(f.CPUPerMsg*1e3, "cpu-ns/op")
	}
	b.ReportMetric(float64(f.GCCycles), "gcs")
	if f.Latency != nil {
		b.ReportMetric(f.Latency.P50, "p50-µs")
		b.ReportMetric(f.Latency.P99, "p99-µs")
	}
}

func BenchmarkLocalSend(b *testing.B) {
	benchmarkScenario(b, bench.ScenarioLocalSend, bench.DefaultConfig())
}

func BenchmarkLocalAsk(b *testing.B) {
	benchmarkScenario(b, bench.ScenarioLocalAsk, bench.DefaultConfig())
}

func BenchmarkLoop(b *testing.B) {
	benchmarkScenario(b, bench.ScenarioLoop, bench.DefaultConfig())
}

func BenchmarkManyEndpoints(b *testing.B) {
	benchmarkScenario(b, bench.ScenarioManyEndpoints, bench.DefaultConfig())
}

func BenchmarkRemoteSend(b *testing.B) {
	benchmarkScenario(b, bench.ScenarioRemoteSend, bench.DefaultConfig())
}

func BenchmarkRemoteAsk(b *testing.B) {
	benchmarkScenario(b, bench.ScenarioRemoteAsk, bench.DefaultConfig())
}

func BenchmarkRemoteFanIn(b *testing.B) {
	benchmarkScenario(b, bench.ScenarioRemoteFanIn, bench.DefaultConfig())
}

func BenchmarkRemoteAskUnderFlood(b *testing.B) {
	benchmarkScenario(b, bench.ScenarioRemoteAskUnderFlood, bench.DefaultConfig())
}

func BenchmarkEmptyTasks(b *testing.B) {
	benchmarkScenario(b, bench.ScenarioEmptyTasks, bench.DefaultConfig())
}
