package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sparkrpc/sparkrpc/bench"
	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newBenchCmd) }

// benchFlags are the flags of `sparkrpc bench`.
type benchFlags struct {
	scenarios     []string
	payloads      string
	inFlight      int
	senders       int
	endpoints     int
	loopEndpoints int
	count         int64
	duration      time.Duration
	warmup        time.Duration
	warmupCount   int64
	window        int
	rounds        int
	jsonFile      string
	compareFile   string
	quick         bool
	list          bool
	progress      string
	kubeBin       string
	metricsAddr   string
	tls           bool
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench [flags]",
		Short: "Measure sparkrpc's message throughput next to raw protoactor-go and raw TCP",
		Long: `Runs the throughput scenarios of sparkrpc, each next to its baselines measured
in the same process and run: raw protoactor-go (local Send / RequestFuture, and
its gRPC remote over loopback) and a raw length-prefixed TCP stream (the
ceiling; for remote-send, remote-ask and empty-tasks also as tcp-delivered,
which decodes each frame into a new message and handles it on another
goroutine, the floor of the endpoint model). Every
message is counted and checked (exactly once, in order where order is
promised); a loss or reorder fails the run (exit 1).

Prints a table with messages/s, MB/s, ask latency percentiles, allocations per
message, sparkrpc's ratio to each baseline and the design targets. Compare the
ratios between runs: absolute figures drift on a shared machine.`,
		Example: `  sparkrpc bench                                  # every scenario, 2 s per measurement
  sparkrpc bench --quick                          # every scenario briefly (smoke test)
  sparkrpc bench --scenarios remote-send,remote-ask --payloads 16,1KiB --inflight 32
  sparkrpc bench --json new.json --compare old.json
  sparkrpc bench --tls --scenarios remote-send,remote-ask   # the same over TLS`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBench(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.scenarios, "scenarios", nil, "scenarios to run, comma-separated (default all; see --list)")
	fl.StringVar(&f.payloads, "payloads", "16,1KiB,64KiB", "payload sizes of the remote scenarios, comma-separated (B, KiB, MiB)")
	fl.IntVar(&f.inFlight, "inflight", 64, "asks in flight in the K-in-flight variants")
	fl.IntVar(&f.senders, "senders", 4, "senders of the fan-in variant of local-send")
	fl.IntVar(&f.endpoints, "endpoints", 10000, "endpoints of the many-endpoints scenario (ping-pong pairs)")
	fl.IntVar(&f.loopEndpoints, "loop-endpoints", 8, "endpoints (one sender each) of the loop scenario")
	fl.Int64Var(&f.count, "count", 0, "messages per measurement (default: run for --duration)")
	fl.DurationVar(&f.duration, "duration", 2*time.Second, "length of each measurement when --count is not set")
	fl.DurationVar(&f.warmup, "warmup", 500*time.Millisecond, "warm-up before each measurement when --count is not set")
	fl.Int64Var(&f.warmupCount, "warmup-count", 0, "warm-up messages before each measurement with --count (default count/10)")
	fl.IntVar(&f.window, "window", 0, "one-way messages in flight at most (default: by payload, 64 to 65,536)")
	fl.IntVar(&f.rounds, "rounds", 1, "measure each variant this many times, alternating the implementations, and report the median")
	fl.StringVar(&f.jsonFile, "json", "", "write the full results as JSON to `FILE`")
	fl.StringVar(&f.compareFile, "compare", "", "print the change against an earlier run's JSON `FILE`")
	fl.BoolVar(&f.quick, "quick", false, "run every scenario briefly (under 30 s in all), for smoke tests")
	fl.BoolVar(&f.list, "list", false, "list the scenarios and exit")
	fl.StringVar(&f.progress, "progress", "auto", "progress line on stderr: auto (when stderr is a terminal), always, never")
	fl.StringVar(&f.kubeBin, "kube-bin", kubeBinDefault(), "`DIR` of the Kubernetes control plane (internal/kubetest/build-controlplane) for the executor-startup scenario; empty skips its Kubernetes side")
	fl.BoolVar(&f.tls, "tls", false, "run the remote scenarios (remote-send, remote-ask, remote-fan-in, remote-ask-under-flood) over TLS, sparkrpc and every baseline, with a self-signed certificate made for the run; the local and scheduler scenarios ignore it")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve the run's Prometheus metrics on http://`ADDR`/metrics (e.g. 127.0.0.1:9090)")
	return cmd
}

// benchConfig builds the harness configuration from the flags; a bad flag is
// a usage error.
func benchConfig(cmd *cobra.Command, f *benchFlags) (bench.Config, error) {
	changed := cmd.Flags().Changed
	cfg := bench.DefaultConfig()
	if f.quick {
		cfg = bench.QuickConfig()
	}
	cfg.TLS = f.tls
	for _, s := range f.scenarios {
		if s = strings.TrimSpace(s); s != "" {
			cfg.Scenarios = append(cfg.Scenarios, s)
		}
	}
	if changed("payloads") || !f.quick {
		sizes, err := parseSizes(f.payloads)
		if err != nil {
			return cfg, cli.Usagef("--payloads: %v", err)
		}
		cfg.Payloads = sizes
	}
	positive := []struct {
		name  string
		value int64
		dst   func(int64)
	}{
		{"inflight", int64(f.inFlight), func(v int64) { cfg.InFlight = int(v) }},
		{"senders", int64(f.senders), func(v int64) { cfg.Senders = int(v) }},
		{"endpoints", int64(f.endpoints), func(v int64) { cfg.Endpoints = int(v) }},
		{"loop-endpoints", int64(f.loopEndpoints), func(v int64) { cfg.LoopEndpoints = int(v) }},
		{"count", f.count, func(v int64) { cfg.Count = v }},
		{"duration", int64(f.duration), func(v int64) { cfg.Duration = time.Duration(v) }},
		{"window", int64(f.window), func(v int64) { cfg.Window = int(v) }},
		{"rounds", int64(f.rounds), func(v int64) { cfg.Rounds = int(v) }},
	}
	for _, p := range positive {
		if !changed(p.name) && (f.quick || p.name == "count" || p.name == "window" || p.name == "rounds") {
			continue
		}
		if p.value <= 0 {
			return cfg, cli.Usagef("--%s must be positive, got %d", p.name, p.value)
		}
		p.dst(p.value)
	}
	if changed("endpoints") && f.endpoints < 2 {
		return cfg, cli.Usagef("--endpoints must be at least 2, got %d", f.endpoints)
	}
	if changed("warmup") || !f.quick {
		if f.warmup < 0 {
			return cfg, cli.Usagef("--warmup must not be negative, got %v", f.warmup)
		}
		cfg.Warmup = f.warmup
	}
	if cfg.Count > 0 {
		cfg.WarmupCount = cfg.Count / 10
		if changed("warmup-count") {
			if f.warmupCount < 0 {
				return cfg, cli.Usagef("--warmup-count must not be negative, got %d", f.warmupCount)
			}
			cfg.WarmupCount = f.warmupCount
		}
	} else if changed("warmup-count") {
		return cfg, cli.Usagef("--warmup-count needs --count")
	}
	if err := cfg.Validate(); err != nil {
		return cfg, &cli.UsageError{Err: err}
	}
	if f.jsonFile != "" {
		// Fail before a run of minutes, not after it.
		dir := filepath.Dir(f.jsonFile)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return cfg, cli.Usagef("--json %s: the folder %s does not exist", f.jsonFile, dir)
		}
		if st, err := os.Stat(f.jsonFile); err == nil && st.IsDir() {
			return cfg, cli.Usagef("--json %s: is a folder", f.jsonFile)
		}
	}
	return cfg, nil
}

// parseSizes parses "16,1KiB,64KiB".
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, err := parseSize(part)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("no payload size")
	}
	return out, nil
}

func parseSize(s string) (int, error) {
	mult := 1
	lower := strings.ToLower(s)
	for _, suf := range []struct {
		s string
		m int
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"kb", 1 << 10}, {"mb", 1 << 20}, {"k", 1 << 10}, {"m", 1 << 20}, {"b", 1}} {
		if strings.HasSuffix(lower, suf.s) {
			lower, mult = strings.TrimSuffix(lower, suf.s), suf.m
			break
		}
	}
	n, err := strconv.Atoi(strings.TrimSpace(lower))
	if err != nil {
		return 0, fmt.Errorf("bad size %q", s)
	}
	if n <= 0 {
		return 0, fmt.Errorf("size %q must be positive", s)
	}
	return n * mult, nil
}

func runBench(cmd *cobra.Command, f *benchFlags) error {
	out := cmd.OutOrStdout()
	if f.list {
		return listScenarios(out)
	}
	var showProgress bool
	switch f.progress {
	case "auto":
		showProgress = cli.IsTerminal(cmd.ErrOrStderr())
	case "always":
		showProgress = true
	case "never":
	default:
		return cli.Usagef("--progress must be auto, always or never, got %q", f.progress)
	}
	cfg, err := benchConfig(cmd, f)
	if err != nil {
		return err
	}
	var old *bench.Report
	if f.compareFile != "" {
		if old, err = bench.ReadJSONFile(f.compareFile); err != nil {
			return cli.Usagef("--compare: %v", err)
		}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	opts := []bench.Option{bench.WithCommand(strings.Join(append([]string{"sparkrpc"}, os.Args[1:]...), " "))}
	if showProgress {
		opts = append(opts, bench.WithProgress(progressPrinter(cmd.ErrOrStderr(), cli.IsTerminal(cmd.ErrOrStderr()))))
	}
	startupOpts, stopClusters := startupClusters(f.kubeBin)
	defer stopClusters()
	opts = append(opts, startupOpts...)
	if f.metricsAddr != "" {
		m := bench.NewMetrics()
		stopMetrics, err := serveBenchMetrics(f.metricsAddr, m, cmd.ErrOrStderr())
		if err != nil {
			return cli.Usagef("%v", err)
		}
		defer stopMetrics()
		opts = append(opts, bench.WithMetrics(m))
	}
	rep, runErr := bench.Run(ctx, cfg, opts...)
	if rep == nil {
		return runErr
	}
	if err := rep.WriteTable(out); err != nil {
		return err
	}
	if old != nil {
		if err := rep.WriteComparison(out, old); err != nil {
			return err
		}
	}
	if f.jsonFile != "" {
		if err := rep.WriteJSONFile(f.jsonFile); err != nil {
			return errors.Join(runErr, err)
		}
	}
	return runErr
}

func listScenarios(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tBASELINES\tDESCRIPTION")
	for _, s := range bench.Scenarios() {
		desc := s.Description
		if s.Unavailable != "" {
			desc += " [sparkrpc side " + s.Unavailable + "]"
		}
		if s.Needs != "" {
			desc += " [needs " + s.Needs + "]"
		}
		if s.TLS {
			desc += " [over TLS with --tls]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, strings.Join(s.Baselines, ","), desc)
	}
	return tw.Flush()
}

// progressPrinter returns a progress function that rewrites one line on a
// terminal, or prints a line per finished measurement otherwise.
func progressPrinter(w io.Writer, terminal bool) func(bench.Progress) {
	return func(p bench.Progress) {
		what := fmt.Sprintf("[%d/%d] %s %s: %s", p.Step, p.Steps, p.Scenario, p.Params, p.Impl)
		if p.Round > 1 {
			what += fmt.Sprintf(" (round %d)", p.Round)
		}
		switch {
		case terminal && p.Step == p.Steps && p.Done:
			fmt.Fprint(w, "\r\033[K")
		case terminal:
			fmt.Fprintf(w, "\r\033[K%s", what)
		case p.Done && p.Err != nil:
			fmt.Fprintf(w, "%s: %v\n", what, p.Err)
		case p.Done:
			fmt.Fprintf(w, "%s: done\n", what)
		}
	}
}
