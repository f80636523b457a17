package bench_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/bench"
)

// registrations returns n registration times, executor i after i × step.
func registrations(n int, step time.Duration) bench.StartupFunc {
	return func(_ context.Context, executors int) ([]time.Duration, error) {
		out := make([]time.Duration, 0, n)
		for i := n; i >= 1; i-- { // any order
			out = append(out, time.Duration(i)*step)
		}
		return out, nil
	}
}

// The executor-startup scenario reports the time to 10, 50 and 100
// executors of each cluster manager it is given, and a cluster manager it
// is not given, or that cannot run, as skipped with the reason.
func TestExecutorStartupScenario(t *testing.T) {
	cfg := bench.QuickConfig()
	cfg.Scenarios = []string{bench.ScenarioExecutorStartup}
	rep, err := bench.Run(context.Background(), cfg,
		bench.WithStartup(bench.ImplKubernetes, bench.Startup{Skip: "no control plane here"}),
		bench.WithStartup(bench.ImplLocalCluster, bench.Startup{Run: registrations(100, 10*time.Millisecond)}))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("%d results", len(rep.Results))
	}
	r := rep.Results[0]
	if r.Impl != bench.ImplKubernetes || r.Skipped != "no control plane here" || r.Error != "" || !rep.Passed {
		t.Fatalf("kubernetes side: impl %q skipped %q error %q passed %v", r.Impl, r.Skipped, r.Error, rep.Passed)
	}
	b := r.Baseline(bench.ImplLocalCluster)
	if b == nil || b.Figures == nil || !b.Figures.Verified.OK || b.Figures.Messages != 100 {
		t.Fatalf("local-cluster: %+v", b)
	}
	for key, want := range map[string]float64{"seconds_to_10": 0.1, "seconds_to_50": 0.5, "seconds_to_100": 1} {
		if got := b.Figures.Extra[key]; got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Executor startup", "0.10 s", "0.50 s", "1.00 s", "skipped: no control plane here"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}

	// Executors that never register fail the run; a cluster manager that
	// was not given is skipped, not failed.
	rep, err = bench.Run(context.Background(), cfg,
		bench.WithStartup(bench.ImplLocalCluster, bench.Startup{Run: registrations(99, time.Millisecond)}))
	if !errors.Is(err, bench.ErrVerificationFailed) || rep == nil || rep.Passed {
		t.Fatalf("99 of 100 executors: %v", err)
	}
	if r := rep.Results[0]; !strings.Contains(r.Skipped, "no kubernetes cluster manager") || r.Error != "" {
		t.Fatalf("kubernetes not given: skipped %q error %q", r.Skipped, r.Error)
	}
	if b := rep.Results[0].Baseline(bench.ImplLocalCluster); b.Figures == nil || b.Figures.Verified.Lost != 1 {
		t.Fatalf("local-cluster with 99 executors: %+v", b)
	}

	// A quick run of every scenario does not start clusters.
	quick := bench.QuickConfig()
	_, err = bench.MeasureOne(context.Background(), quick, bench.ScenarioExecutorStartup, bench.ImplLocalCluster, bench.Params{Executors: 100},
		bench.WithStartup(bench.ImplLocalCluster, bench.Startup{Run: registrations(100, time.Millisecond)}))
	if !errors.Is(err, bench.ErrUnavailable) || !strings.Contains(err.Error(), "quick run") {
		t.Fatalf("quick run: %v", err)
	}
}
