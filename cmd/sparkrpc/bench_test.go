package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/bench"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/launcher"
)

// execBench runs the root command with args, capturing its output.
func execBench(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	_, err := root.ExecuteC()
	return out.String(), err
}

// `sparkrpc bench --quick --json FILE` runs every scenario, prints the table
// and writes a complete report in which every count was verified.
func TestBenchQuickWritesCompleteJSON(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "out.json")
	args := []string{"bench", "--quick", "--progress", "never", "--json", file}
	if testutil.RaceEnabled {
		// Smaller fixed counts and window (the flood under the asks of
		// remote-ask-under-flood): the race detector slows everything tenfold.
		args = append(args, "--payloads", "16,1KiB", "--count", "300", "--warmup-count", "30", "--endpoints", "200", "--window", "256")
	}
	out, err := execBench(t, args...)
	if err != nil {
		t.Fatalf("bench --quick: %v\n%s", err, out)
	}
	for _, want := range []string{"SCENARIO", "local-send", "remote-ask", "Targets (docs/design.md §6)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	rep, err := bench.ReadJSONFile(file)
	if err != nil {
		t.Fatalf("read the JSON: %v", err)
	}
	if !rep.Passed || !rep.Config.Quick {
		t.Fatalf("report passed=%v quick=%v", rep.Passed, rep.Config.Quick)
	}
	m := rep.Machine
	if m.GOMAXPROCS <= 0 || m.GoVersion == "" || m.GOOS == "" || m.GOARCH == "" {
		t.Fatalf("machine info incomplete: %+v", m)
	}
	if rep.Started.IsZero() || rep.Finished.Before(rep.Started) {
		t.Fatalf("times %v .. %v", rep.Started, rep.Finished)
	}
	unavailable := map[string]bool{}
	for _, s := range bench.Scenarios() {
		unavailable[s.Name] = s.Unavailable != "" || s.Needs != ""
	}
	seen := map[string]int{}
	for _, r := range rep.Results {
		seen[r.Scenario]++
		switch {
		case r.Skipped != "":
			if !unavailable[r.Scenario] {
				t.Errorf("%s skipped (%s) although available", r.Key(), r.Skipped)
			}
		case r.Figures == nil:
			t.Errorf("%s: no figures (error %q)", r.Key(), r.Error)
		default:
			checkFigures(t, r.Key()+" sparkrpc", r.Figures)
		}
		for _, b := range r.Baselines {
			if b.Skipped != "" {
				continue
			}
			if b.Figures == nil {
				t.Errorf("%s %s: no figures (error %q)", r.Key(), b.Name, b.Error)
				continue
			}
			checkFigures(t, r.Key()+" "+b.Name, b.Figures)
			if r.Figures != nil {
				if _, ok := r.Ratio(b.Name, "msgs_per_sec"); !ok {
					t.Errorf("%s: no ratio to %s", r.Key(), b.Name)
				}
			}
		}
		for _, tg := range r.Targets {
			if tg.Name == "" || tg.Threshold <= 0 {
				t.Errorf("%s: incomplete target %+v", r.Key(), tg)
			}
		}
	}
	for _, name := range bench.ScenarioNames() {
		if seen[name] == 0 {
			t.Errorf("scenario %s missing from the report", name)
		}
	}
}

func checkFigures(t *testing.T, what string, f *bench.Figures) {
	t.Helper()
	v := f.Verified
	if !v.OK || v.Received != v.Sent || v.Sent != f.Messages || f.Messages <= 0 || v.Lost != 0 || v.Reordered != 0 || v.Duplicates != 0 {
		t.Errorf("%s: verification %+v of %d messages", what, v, f.Messages)
	}
	if f.MsgsPerSec <= 0 || f.Seconds <= 0 {
		t.Errorf("%s: figures %+v", what, f)
	}
}

func TestBenchBadFlagsExit1(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("not a report"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"bench", "--scenarios", "local-send,warp-drive"},
		{"bench", "--count", "0"},
		{"bench", "--count", "-5"},
		{"bench", "--inflight", "0"},
		{"bench", "--senders", "-1"},
		{"bench", "--endpoints", "1"},
		{"bench", "--duration", "-1s"},
		{"bench", "--duration", "0s"},
		{"bench", "--payloads", "0"},
		{"bench", "--payloads", "big"},
		{"bench", "--progress", "sometimes"},
		{"bench", "--warmup-count", "5"},
		{"bench", "--rounds", "0"},
		{"bench", "--compare", filepath.Join(dir, "missing.json")},
		{"bench", "--compare", garbage},
		{"bench", "--no-such-flag"},
		{"bench", "extra-arg"},
		// A run of minutes must not end in an error about the output.
		{"bench", "--json", filepath.Join(dir, "no-such-folder", "out.json")},
		{"bench", "--json", dir},
	} {
		if code := launcher.Run(args, append(options(), launcher.WithOutput(io.Discard, io.Discard))...); code != 1 {
			t.Errorf("sparkrpc %s: exit %d, want 1", strings.Join(args, " "), code)
		}
	}
}

func TestBenchList(t *testing.T) {
	out, err := execBench(t, "bench", "--list")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range bench.ScenarioNames() {
		if !strings.Contains(out, name) {
			t.Errorf("--list lacks %s:\n%s", name, out)
		}
	}
}

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("16, 1KiB,64kib,2k,1MiB,100B")
	if err != nil {
		t.Fatal(err)
	}
	want := []int{16, 1024, 65536, 2048, 1 << 20, 100}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// `sparkrpc bench --tls` runs the remote scenarios over TLS and says so in
// the table and the JSON; --list says which scenarios it applies to.
func TestBenchTLS(t *testing.T) {
	file := filepath.Join(t.TempDir(), "out.json")
	args := []string{"bench", "--tls", "--quick", "--progress", "never", "--json", file,
		"--scenarios", "remote-ask,local-ask", "--payloads", "16", "--inflight", "4"}
	if testutil.RaceEnabled {
		args = append(args, "--count", "300", "--warmup-count", "30")
	}
	out, err := execBench(t, args...)
	if err != nil {
		t.Fatalf("bench --tls: %v\n%s", err, out)
	}
	if want := "TLS: remote-ask over TLS"; !strings.Contains(out, want) {
		t.Errorf("table lacks %q:\n%s", want, out)
	}
	rep, err := bench.ReadJSONFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed || !rep.Config.TLS || rep.TLS == nil || len(rep.TLS.Scenarios) != 1 || rep.TLS.Scenarios[0] != bench.ScenarioRemoteAsk {
		t.Fatalf("report passed %v, config TLS %v, TLS %+v", rep.Passed, rep.Config.TLS, rep.TLS)
	}
	list, err := execBench(t, "bench", "--list")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(list, "\n") {
		remote := strings.HasPrefix(line, "remote-")
		if remote != strings.Contains(line, "over TLS with --tls") {
			t.Errorf("--list line says TLS wrongly: %s", line)
		}
	}
}
