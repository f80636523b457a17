package bench

// startup.go is the executor-startup scenario: the time from submitting an
// application until 10, 50 and 100 of its executors have registered with
// its driver, on Kubernetes (executor pods) next to local-cluster
// (executor processes started by node managers). The harness starts no
// cluster itself: the caller gives it the cluster managers with
// WithStartup (`sparkrpc bench` does), and a cluster manager that was not
// given, or cannot run here, is reported as skipped with the reason.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
)

// ScenarioExecutorStartup is the executor-startup scenario.
const ScenarioExecutorStartup = "executor-startup"

// Implementations of the executor-startup scenario.
const (
	// ImplKubernetes is an application on a k8s:// master: executor pods.
	ImplKubernetes = "kubernetes"
	// ImplLocalCluster is an application on local-cluster[W,C,M]: executor
	// processes started by embedded node managers.
	ImplLocalCluster = "local-cluster"
)

// startupExecutors is the number of executors the scenario asks for, and
// startupMilestones the counts whose time it reports.
const startupExecutors = 100

var startupMilestones = []int{10, 50, 100}

// StartupFunc submits an application that wants executors executors and
// returns, for each executor that registered with its driver, the time
// from the submission until it did (in any order). It returns when all
// have registered and the application has ended, or with an error. An
// error wrapping ErrUnavailable makes the scenario report the cluster
// manager as skipped, with the error's text as the reason.
type StartupFunc func(ctx context.Context, executors int) ([]time.Duration, error)

// Startup is a cluster manager of the executor-startup scenario.
type Startup struct {
	// Run measures one application (see StartupFunc).
	Run StartupFunc
	// Skip, when not empty, says why this cluster manager is not measured;
	// the report shows it as skipped with this reason.
	Skip string
}

// WithStartup gives the executor-startup scenario its cluster manager impl
// (ImplKubernetes or ImplLocalCluster). Without it, that side is reported
// as skipped.
func WithStartup(impl string, s Startup) Option {
	return func(h *harness) {
		if h.startup == nil {
			h.startup = map[string]Startup{}
		}
		h.startup[impl] = s
	}
}

// unavailableError is a measurement that could not run here; runVariant
// reports it as skipped.
type unavailableError struct{ reason string }

func (e *unavailableError) Error() string { return e.reason }
func (e *unavailableError) Unwrap() error { return ErrUnavailable }

// skippedBecause returns the reason of an error that wraps ErrUnavailable.
func skippedBecause(err error) (string, bool) {
	if err == nil || !errors.Is(err, ErrUnavailable) {
		return "", false
	}
	var u *unavailableError
	if errors.As(err, &u) {
		return u.reason, true
	}
	return err.Error(), true
}

func startupScenario() *scenario {
	return &scenario{
		name: ScenarioExecutorStartup,
		description: fmt.Sprintf("time from submit until %v executors registered, on Kubernetes (needs a control plane: --kube-bin) and on local-cluster",
			startupMilestones),
		needs:     "clusters started for the run (skipped in quick runs unless named)",
		variants:  func(*Config) []Params { return []Params{{Executors: startupExecutors}} },
		sparkrpc:  impl{name: ImplKubernetes, run: startupRun(ImplKubernetes)},
		baselines: []impl{{name: ImplLocalCluster, run: startupRun(ImplLocalCluster)}},
	}
}

// startupRun measures the application of the cluster manager impl.
func startupRun(impl string) func(ctx context.Context, h *harness, p Params) (*Figures, error) {
	return func(ctx context.Context, h *harness, p Params) (*Figures, error) {
		if h.cfg.Quick && !slices.Contains(h.cfg.Scenarios, ScenarioExecutorStartup) {
			return nil, &unavailableError{"quick run: it starts clusters and takes about a minute (name it in --scenarios to run it)"}
		}
		s, ok := h.startup[impl]
		switch {
		case ok && s.Skip != "":
			return nil, &unavailableError{s.Skip}
		case !ok || s.Run == nil:
			return nil, &unavailableError{"no " + impl + " cluster manager was given to the harness (bench.WithStartup)"}
		}
		return h.measureOnce(ctx, 0, func() (sample, error) {
			offsets, err := s.Run(ctx, p.Executors)
			if err != nil {
				return sample{}, err
			}
			return startupSample(p.Executors, offsets), nil
		})
	}
}

// startupSample turns registration times into figures: one "message" per
// executor, the time to the last one, their distribution (from submit) as
// the latency, and the milestones as extra figures seconds_to_N.
func startupSample(n int, offsets []time.Duration) sample {
	offsets = slices.Clone(offsets)
	slices.Sort(offsets)
	hist := newHistogram()
	for _, d := range offsets {
		hist.record(d)
	}
	got := len(offsets)
	v := Verification{Sent: int64(n), Received: int64(min(got, n))}
	v.Lost = int64(max(0, n-got))
	v.Unknown = int64(max(0, got-n))
	v.OK = got == n
	extra := map[string]float64{"executors": float64(n)}
	for _, m := range startupMilestones {
		if m <= got {
			extra["seconds_to_"+strconv.Itoa(m)] = offsets[m-1].Seconds()
		}
	}
	var last time.Duration
	if got > 0 {
		last = offsets[got-1]
	}
	return sample{messages: int64(got), elapsed: last, verified: v, hist: hist, extra: extra}
}

// writeStartup writes the milestones of the executor-startup results.
func (rep *Report) writeStartup(w io.Writer) error {
	t := &table{align: "llrrrl"}
	head := []string{"SCENARIO", "IMPL"}
	for _, m := range startupMilestones {
		head = append(head, fmt.Sprintf("%d EXECUTORS", m))
	}
	t.add(append(head, "")...)
	rows := 0
	for _, r := range rep.Results {
		if r.Scenario != ScenarioExecutorStartup {
			continue
		}
		add := func(name string, f *Figures, skipped, failed string) {
			cells := []string{r.Scenario, name}
			for _, m := range startupMilestones {
				c := "-"
				if f != nil {
					if v, ok := f.Extra["seconds_to_"+strconv.Itoa(m)]; ok {
						c = strconv.FormatFloat(v, 'f', 2, 64) + " s"
					}
				}
				cells = append(cells, c)
			}
			note := ""
			switch {
			case skipped != "":
				note = "skipped: " + skipped
			case failed != "":
				note = "failed: " + failed
			}
			t.add(append(cells, note)...)
			rows++
		}
		add(r.Impl, r.Figures, r.Skipped, r.Error)
		for _, b := range r.Baselines {
			add(b.Name, b.Figures, b.Skipped, b.Error)
		}
	}
	if rows == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nExecutor startup (time from submit until N executors registered):")
	return t.write(w)
}
