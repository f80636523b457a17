package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Implementation names used in reports.
const (
	// ImplSparkrpc is sparkrpc itself, the measured side of every scenario.
	ImplSparkrpc = "sparkrpc"
	// ImplProtoactor is raw protoactor-go in one process (Send and
	// RequestFuture to an actor).
	ImplProtoactor = "protoactor"
	// ImplProtoactorRemote is protoactor-go's gRPC remote between two actor
	// systems in one process over loopback.
	ImplProtoactorRemote = "protoactor-remote"
	// ImplTCP is a raw length-prefixed TCP stream of the same messages over
	// loopback: the ceiling.
	ImplTCP = "tcp"
	// ImplTCPDelivered is the raw TCP stream with what delivery to an
	// endpoint cannot do without: each frame decoded into a new message,
	// handled on another goroutine. The floor of the endpoint model.
	ImplTCPDelivered = "tcp-delivered"
	// ImplSparkrpcShared is sparkrpc with the shared loop, the baseline of
	// the dedicated-loop scenario.
	ImplSparkrpcShared = "sparkrpc-shared"
	// ImplSparkrpcNoEventLog is sparkrpc's driver with a listener that
	// does nothing instead of the event log, the baseline of the event
	// log's scenario: the driver then builds and posts its events as
	// every driver the cluster runs does.
	ImplSparkrpcNoEventLog = "sparkrpc-no-eventlog"
	// ImplSparkrpcBorrowed is sparkrpc with an endpoint that borrows its
	// messages (actor.Borrower): a large message aliases the pooled buffer
	// its frame was read into instead of owning a copy. A baseline of the
	// remote sends, beside the default path that ImplSparkrpc measures.
	ImplSparkrpcBorrowed = "sparkrpc-borrowed"
)

// Option configures Run.
type Option func(*harness)

// WithLogger sets the logger of the envs and actor systems the harness
// starts (default: none).
func WithLogger(l zerolog.Logger) Option {
	return func(h *harness) { h.log = l.With().Str("component", "bench").Logger() }
}

// WithProgress sets a function called before and after each measurement,
// from the goroutine that called Run.
func WithProgress(fn func(Progress)) Option {
	return func(h *harness) { h.progress = fn }
}

// WithCommand records the command line that started the run in the report.
func WithCommand(cmd string) Option {
	return func(h *harness) { h.command = cmd }
}

// Progress reports what the harness is doing.
type Progress struct {
	// Step counts the measurements done so far, of Steps in all.
	Step, Steps int
	// Scenario, Params and Impl name the measurement.
	Scenario string
	Params   Params
	Impl     string
	// Round counts the rounds of the measurement, from 1 (see
	// Config.Rounds).
	Round int
	// Done is false when the measurement starts and true when it ended.
	Done bool
	// Err is the measurement's failure, when Done.
	Err error
	// Skipped says why the measurement did not run, when Done.
	Skipped string
}

type harness struct {
	cfg      Config
	log      zerolog.Logger
	progress func(Progress)
	command  string
	metrics  *Metrics // nil unless WithMetrics
	step     int
	steps    int
	startup  map[string]Startup // cluster managers of executor-startup
	// tls is the TLS of a run with Config.TLS, and connTLS the same while a
	// scenario whose connections use it is measured (nil otherwise): what
	// the envs, remotes and raw connections that measurements open use.
	tls     *tlsSetup
	connTLS *tlsSetup
}

// impl is one implementation of a scenario: sparkrpc's or a baseline's.
type impl struct {
	name string
	run  func(ctx context.Context, h *harness, p Params) (*Figures, error)
	// unavailable returns why the implementation cannot run in this build
	// (e.g. a package it needs does not exist yet); nil means it can.
	unavailable func() string
}

// scenario is one scenario of the harness.
type scenario struct {
	name        string
	description string
	variants    func(c *Config) []Params
	sparkrpc    impl
	baselines   []impl
	targets     func(c *Config, p Params) []targetSpec
	// needs, when set, says what the scenario needs beyond this process;
	// its measurements may then be reported as skipped.
	needs string
	// tls is true when the scenario's connections (sparkrpc's and every
	// baseline's) use TLS in a run with Config.TLS.
	tls bool
}

// ScenarioInfo describes a scenario for listings.
type ScenarioInfo struct {
	Name        string
	Description string
	// Baselines are the implementations measured beside sparkrpc.
	Baselines []string
	// Unavailable says why sparkrpc's side cannot run in this build, if so.
	Unavailable string
	// Needs, when set, says what the scenario needs beyond this process
	// (e.g. clusters); a run without it reports the scenario as skipped.
	Needs string
	// TLS is true when the scenario runs over TLS with Config.TLS; other
	// scenarios ignore it.
	TLS bool
}

// Scenarios lists the scenarios in run order.
func Scenarios() []ScenarioInfo {
	var out []ScenarioInfo
	for _, s := range registry() {
		info := ScenarioInfo{Name: s.name, Description: s.description, Needs: s.needs, TLS: s.tls}
		for _, b := range s.baselines {
			info.Baselines = append(info.Baselines, b.name)
		}
		if s.sparkrpc.unavailable != nil {
			info.Unavailable = s.sparkrpc.unavailable()
		}
		out = append(out, info)
	}
	return out
}

// ScenarioNames lists the scenario names in run order.
func ScenarioNames() []string {
	var out []string
	for _, s := range registry() {
		out = append(out, s.name)
	}
	return out
}

func lookupScenario(name string) *scenario {
	for _, s := range registry() {
		if s.name == name {
			return s
		}
	}
	return nil
}

// Run runs the scenarios of cfg, each sparkrpc measurement next to its
// baselines, and returns the report. A configuration that cannot run returns
// an error wrapping ErrInvalidConfig or ErrUnknownScenario and no report. When
// a message was lost, duplicated or reordered, or a measurement failed, Run
// returns the full report and an error wrapping ErrVerificationFailed. Run
// stops early, with ctx's error, when ctx ends. With cfg.TLS, a certificate
// that cannot be made returns an error wrapping ErrTLSSetup and no report.
func Run(ctx context.Context, cfg Config, opts ...Option) (rep *Report, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &harness{cfg: cfg, log: zerolog.Nop()}
	for _, o := range opts {
		o(h)
	}
	rep = &Report{
		FormatVersion: FormatVersion,
		Started:       time.Now().UTC(),
		Command:       h.command,
		Machine:       CollectMachine(),
		Config:        cfg.record(),
	}
	cpu0, cpuKnown := readCPUTimes()
	if cfg.TLS {
		if h.tls, err = newTLSSetup(ctx); err != nil {
			return nil, err
		}
		defer func() { err = errors.Join(err, h.tls.close()) }()
		info := h.tls.info
		rep.TLS = &info
	}
	var plan []*scenario
	names := cfg.Scenarios
	if len(names) == 0 {
		names = ScenarioNames()
	}
	for _, s := range registry() {
		for _, n := range names {
			if n == s.name {
				plan = append(plan, s)
				break
			}
		}
	}
	for _, s := range plan {
		h.steps += len(s.variants(&h.cfg)) * (1 + len(s.baselines)) * max(1, cfg.Rounds)
		if s.tls && rep.TLS != nil {
			rep.TLS.Scenarios = append(rep.TLS.Scenarios, s.name)
		}
	}
	var failed []string
	for _, s := range plan {
		for _, p := range s.variants(&h.cfg) {
			res := h.runVariant(ctx, s, p)
			rep.Results = append(rep.Results, res)
			if res.Failed() {
				failed = append(failed, res.Key())
			}
			if err := ctx.Err(); err != nil {
				rep.Finished = time.Now().UTC()
				rep.recordSteal(cpu0, cpuKnown)
				return rep, err
			}
		}
	}
	rep.Finished = time.Now().UTC()
	rep.recordSteal(cpu0, cpuKnown)
	rep.Passed = len(failed) == 0
	if !rep.Passed {
		return rep, fmt.Errorf("%w: %s", ErrVerificationFailed, strings.Join(failed, "; "))
	}
	return rep, nil
}

func (h *harness) runVariant(ctx context.Context, s *scenario, p Params) Result {
	h.useTLS(s)
	defer h.useTLS(nil)
	res := Result{Scenario: s.name, Params: p}
	if s.sparkrpc.name != ImplSparkrpc {
		res.Impl = s.sparkrpc.name
	}
	impls := append([]impl{s.sparkrpc}, s.baselines...)
	type outcome struct {
		runs    []*Figures
		skipped string
		err     error
	}
	out := make([]outcome, len(impls))
	rounds := max(1, h.cfg.Rounds)
	// Rounds alternate the implementations, so that a slow spell of the
	// machine hits all of them alike.
	for round := 0; round < rounds; round++ {
		for i, im := range impls {
			o := &out[i]
			if o.err != nil || o.skipped != "" || ctx.Err() != nil {
				h.step++
				continue
			}
			h.report(Progress{Scenario: s.name, Params: p, Impl: im.name, Round: round + 1})
			if im.unavailable != nil {
				o.skipped = im.unavailable()
			}
			if o.skipped == "" {
				f, err := im.run(ctx, h, p)
				if why, ok := skippedBecause(err); ok {
					o.skipped = why
				} else {
					if f != nil {
						o.runs = append(o.runs, f)
					}
					o.err = err
				}
			}
			h.step++
			h.report(Progress{Scenario: s.name, Params: p, Impl: im.name, Round: round + 1, Done: true, Err: o.err, Skipped: o.skipped})
		}
	}
	for i, im := range impls {
		o := out[i]
		f := pickMedian(o.runs, o.err != nil)
		errText := ""
		if o.err != nil {
			errText = o.err.Error()
		}
		if i == 0 {
			res.Figures, res.Skipped, res.Error = f, o.skipped, errText
			continue
		}
		res.Baselines = append(res.Baselines, Baseline{Name: im.name, Figures: f, Skipped: o.skipped, Error: errText})
	}
	res.Ratios = ratios(res.Figures, res.Baselines)
	if rounds > 1 && out[0].err == nil {
		for i := range res.Ratios {
			x := &res.Ratios[i]
			for j, im := range impls {
				if j > 0 && im.name == x.Baseline && out[j].err == nil {
					if v, ok := pairedRatio(out[0].runs, out[j].runs, x.Metric); ok {
						x.Value = v
					}
				}
			}
		}
	}
	if s.targets != nil {
		var runs []*Figures
		if out[0].err == nil {
			runs = out[0].runs
		}
		for _, t := range s.targets(&h.cfg, p) {
			res.Targets = append(res.Targets, evalTarget(t, &res, runs))
		}
	}
	return res
}

// pairedRatio is the median over rounds of the ratio of a's round to b's
// round on metric: rounds alternate the implementations, so each pair was
// measured close together and slow drifts of the machine cancel out.
func pairedRatio(a, b []*Figures, metric string) (float64, bool) {
	if len(a) != len(b) || len(a) < 2 {
		return 0, false
	}
	var rs []float64
	for i := range a {
		single := ratios(a[i], []Baseline{{Name: "x", Figures: b[i]}})
		for _, r := range single {
			if r.Metric == metric {
				rs = append(rs, r.Value)
			}
		}
	}
	if len(rs) != len(a) {
		return 0, false
	}
	return medianOf(rs), true
}

// pickMedian returns the run with the median messages per second (the
// failed last run when failed), recording every run's rate in it.
func pickMedian(runs []*Figures, failed bool) *Figures {
	if len(runs) == 0 {
		return nil
	}
	if failed {
		return runs[len(runs)-1]
	}
	if len(runs) == 1 {
		return runs[0]
	}
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b *Figures) int { return cmp.Compare(a.MsgsPerSec, b.MsgsPerSec) })
	f := *sorted[(len(sorted)-1)/2]
	for _, r := range runs {
		f.RoundsMsgsPerSec = append(f.RoundsMsgsPerSec, r.MsgsPerSec)
	}
	return &f
}

// useTLS makes the connections of what is measured next use the run's TLS
// when s is a scenario that runs over it, and plaintext otherwise.
func (h *harness) useTLS(s *scenario) {
	h.connTLS = nil
	if s != nil && s.tls {
		h.connTLS = h.tls
	}
}

func (h *harness) report(p Progress) {
	p.Step, p.Steps = h.step, h.steps
	if h.progress != nil {
		h.progress(p)
	}
}

// raceUnavailable is the unavailable function of protoactor's gRPC remote:
// remote.Start sets gRPC's global logger on every start while the servers
// of earlier remotes read it, which the race detector reports; under the
// race detector the baseline is skipped.
func raceUnavailable() string {
	if raceEnabled {
		return "protoactor remote races on gRPC's global logger under the race detector"
	}
	return ""
}

// MeasureOne measures one implementation (ImplSparkrpc or one of the
// scenario's baselines) of one variant of a scenario, with cfg's budget and
// warm-up, and returns its figures. It serves the micro benchmarks and
// anything that wants one figure without a report. An unknown scenario or
// implementation returns an error wrapping ErrUnknownScenario; an
// implementation that cannot run in this build returns one wrapping
// ErrUnavailable. With cfg.TLS, the remote scenarios run over TLS as in Run.
func MeasureOne(ctx context.Context, cfg Config, scenarioName, implName string, p Params, opts ...Option) (f *Figures, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := lookupScenario(scenarioName)
	if s == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownScenario, scenarioName)
	}
	h := &harness{cfg: cfg, log: zerolog.Nop()}
	for _, o := range opts {
		o(h)
	}
	for _, im := range append([]impl{s.sparkrpc}, s.baselines...) {
		if im.name != implName {
			continue
		}
		if im.unavailable != nil {
			if why := im.unavailable(); why != "" {
				return nil, fmt.Errorf("%w: %s %s: %s", ErrUnavailable, scenarioName, implName, why)
			}
		}
		if cfg.TLS && s.tls { // only the scenarios that run over TLS need a certificate
			if h.tls, err = newTLSSetup(ctx); err != nil {
				return nil, err
			}
			defer func() { err = errors.Join(err, h.tls.close()) }()
			h.useTLS(s)
		}
		return im.run(ctx, h, p)
	}
	return nil, fmt.Errorf("%w: scenario %q has no implementation %q", ErrUnknownScenario, scenarioName, implName)
}

// Variants returns the parameters of the variants that Run measures for a
// scenario under cfg, or nil for an unknown scenario.
func Variants(cfg Config, scenarioName string) []Params {
	s := lookupScenario(scenarioName)
	if s == nil {
		return nil
	}
	return s.variants(&cfg)
}
