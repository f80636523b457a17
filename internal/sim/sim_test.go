package sim_test

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/sim"
)

var (
	seedsFlag    = flag.Int("seeds", 0, "run seeds 1..N (default: the CI set)")
	seedFlag     = flag.Uint64("seed", 0, "run this one seed")
	firstFlag    = flag.Uint64("first", 1, "the first seed of -seeds")
	traceFlag    = flag.Bool("trace", false, "print the whole trace of -seed")
	progressFlag = flag.Bool("progress", false, "draw a progress bar on stderr (on by default past 1000 seeds)")
)

// ciSeeds is how many seeds TestSimulation runs without flags: a minute or
// so under -race on two cores.
const ciSeeds = 2000

// TestSimulation runs seeds 1..N (-seeds=N, default ciSeeds) or one seed
// (-seed=S) of the simulated application and fails if any broke an
// invariant, printing the command that replays each failed seed.
func TestSimulation(t *testing.T) {
	out := output(t)
	if *seedFlag != 0 {
		r := sim.RunSeed(t, *seedFlag, *traceFlag)
		report(out, r, *traceFlag)
		if r.Failed() {
			t.Fail()
		}
		if r.RaceHash != "" {
			fmt.Fprintf(out, "an armed race ran: the trace up to it hashes %s, what follows also depends on the Go scheduler\n", r.RaceHash)
		}
		fmt.Fprintf(out, "simulation: seed %d trace %s\n", r.Seed, r.Hash)
		return
	}
	n := *seedsFlag
	if n <= 0 {
		n = ciSeeds
	}
	progress := *progressFlag || *seedsFlag > 1000
	total := sim.NewStats()
	began := time.Now()
	for i := range n {
		seed := *firstFlag + uint64(i)
		r := sim.RunSeed(t, seed, false)
		total.Add(r.Stats)
		if r.Failed() {
			if progress {
				fmt.Fprintln(os.Stderr)
			}
			report(out, r, false)
		}
		if progress && (i+1)%max(1, n/200) == 0 || progress && i+1 == n {
			bar(os.Stderr, i+1, n, total.Failed, time.Since(began))
		}
	}
	if progress {
		fmt.Fprintln(os.Stderr)
	}
	if total.Failed > 0 {
		t.Fail()
	}
	if testing.Verbose() || progress || total.Failed > 0 {
		total.WriteTable(out)
	}
	fmt.Fprintf(out, "simulation: %d seeds, %d failed\n", total.Seeds, total.Failed)
}

// output is where the results go: go test shows a passing package's
// standard output only with -v, so without -v they go to the terminal,
// when there is one.
func output(t *testing.T) io.Writer {
	if testing.Verbose() {
		return os.Stdout
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return os.Stdout
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

// report prints a failed seed: its failures, its faults, the trace around
// the first failure and the command that replays it.
func report(out io.Writer, r sim.Result, full bool) {
	if !r.Failed() && !full {
		return
	}
	if r.Failed() {
		fmt.Fprintf(out, "--- seed %d FAILED (trace %s)\n", r.Seed, r.Hash)
		for _, f := range r.Failures {
			fmt.Fprintf(out, "    %s\n", f)
		}
	}
	fmt.Fprintf(out, "    faults: %s\n", strings.Join(r.Faults, "; "))
	fmt.Fprintf(out, "    trace:\n")
	for _, l := range r.Trace {
		fmt.Fprintf(out, "      %s\n", l)
	}
	if r.Failed() {
		fmt.Fprintf(out, "    replay: %s\n", r.Replay())
	}
}

// bar draws a progress bar.
func bar(out io.Writer, done, n, failed int, took time.Duration) {
	const width = 40
	k := done * width / n
	rate := float64(done) / took.Seconds()
	fmt.Fprintf(out, "\r[%s%s] %d/%d seeds, %d failed, %.0f seeds/s", strings.Repeat("#", k), strings.Repeat(".", width-k), done, n, failed, rate)
}

// determinismFlag's default is enough seeds to catch a source of
// nondeterminism as rare as one seed in a few hundred (some 20 seconds).
var determinismFlag = flag.Int("determinism", 1000, "TestDeterminism runs seeds 1..N twice")

// TestDeterminism runs seeds twice and checks that each gives the same
// trace hash both times.
func TestDeterminism(t *testing.T) {
	if raceEnabled {
		// Under the race detector its seeds would take a minute more of
		// the test command. CI runs this test on its own, without it.
		t.Skip("determinism is checked without the race detector")
	}
	for i := range *determinismFlag {
		seed := *firstFlag + uint64(i)
		a, b := sim.RunSeed(t, seed, false), sim.RunSeed(t, seed, false)
		if a.Comparable() != b.Comparable() {
			t.Errorf("seed %d: trace %s, then %s: %s", seed, a.Comparable(), b.Comparable(), a.Replay())
		}
	}
}
