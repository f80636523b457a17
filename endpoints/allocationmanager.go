package endpoints

// This file holds the ExecutorAllocationManager: the loop that runs the
// decision core of allocationplan.go on the driver's state and carries its
// decisions out through Driver.RequestTotalExecutors and
// Driver.KillExecutors, logging them and keeping them for the UI.

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// defaultAllocationInterval is how often the manager decides (Spark's
// 100 ms).
const defaultAllocationInterval = 100 * time.Millisecond

// keptDecisions is how many of its last decisions the manager keeps for
// Status.
const keptDecisions = 100

// ExecutorAllocationManager is Spark's dynamic allocation for a driver with
// a cluster manager: every 100 ms it asks for more executors while tasks
// wait for a core (1, 2, 4, ... more per sustained backlog interval, up to
// what the tasks need and maxExecutors), lowers the target when the tasks
// need fewer, and releases executors idle past the idle timeout, down to
// minExecutors. See the package's doc. Its methods are safe for concurrent
// use.
type ExecutorAllocationManager struct {
	d        *Driver
	log      zerolog.Logger
	interval time.Duration
	now      func() time.Time

	mu        sync.Mutex
	core      *allocationCore
	resync    bool // the last request failed: ask again
	failing   bool // requests have failed since the last warning
	last      allocationInput
	decisions []AllocationDecision // oldest first

	runMu  sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// AllocationOption configures NewExecutorAllocationManager.
type AllocationOption func(*ExecutorAllocationManager)

// WithAllocationInterval sets how often the manager decides (default
// 100ms).
func WithAllocationInterval(d time.Duration) AllocationOption {
	return func(m *ExecutorAllocationManager) {
		if d > 0 {
			m.interval = d
		}
	}
}

// NewExecutorAllocationManager returns the manager of d's executors with
// cfg (from ParseAllocationConfig). d must have a cluster manager
// (WithClusterManager): without one it returns ErrNoClusterManager. Start
// runs it.
func NewExecutorAllocationManager(d *Driver, cfg AllocationConfig, opts ...AllocationOption) (*ExecutorAllocationManager, error) {
	if d.cm == nil {
		return nil, ErrNoClusterManager
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.TasksPerExecutor = max(1, cfg.TasksPerExecutor)
	m := &ExecutorAllocationManager{d: d, log: d.log,
		interval: defaultAllocationInterval, now: time.Now, core: newAllocationCore(cfg)}
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// Start starts the manager's loop; it asks for the initial target at once.
// A second Start does nothing.
func (m *ExecutorAllocationManager) Start() {
	m.runMu.Lock()
	defer m.runMu.Unlock()
	if m.done != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel, m.done = cancel, make(chan struct{})
	m.d.allocating.Add(1) // until Stop: see Driver.KillExecutors
	go m.loop(ctx, m.done)
}

// Stop stops the loop and waits for it to end (a request under way is
// cancelled). It may be called more than once, and without Start.
func (m *ExecutorAllocationManager) Stop() {
	m.runMu.Lock()
	cancel, done := m.cancel, m.done
	m.cancel = nil
	m.runMu.Unlock()
	if cancel == nil {
		if done != nil {
			<-done // a Stop under way
		}
		return
	}
	cancel()
	<-done
}

func (m *ExecutorAllocationManager) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	defer m.d.allocating.Add(-1) // before done: a Stop that returns has let KillExecutors go
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		m.step(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// step decides once on the driver's state and carries the plan out: the
// idle executors are released first, then the target is asked for (a
// release may have lowered the cluster manager's).
func (m *ExecutorAllocationManager) step(ctx context.Context) {
	if m.d.isStopped() {
		return
	}
	in := m.d.allocationInput(m.now())
	m.mu.Lock()
	p := m.core.step(in)
	if m.resync {
		p.Sync, m.resync = true, false
	}
	m.last = in
	m.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var kept []string // released by the plan but turned busy: they stay
	if len(p.Kill) > 0 {
		killed, err := m.d.killExecutors(cctx, p.Kill, false)
		if err != nil && !errors.Is(err, ErrDriverStopped) {
			m.log.Warn().Err(err).Strs("executors", p.Kill).Msg("releasing idle executors")
		}
		for _, id := range p.Kill {
			if !slices.Contains(killed, id) {
				kept = append(kept, id)
			}
		}
	}
	// The decisions say what was done: a release names the executors
	// released, and is no decision when none was.
	decisions := p.Decisions[:0]
	for _, dec := range p.Decisions {
		if dec.Kind == DecisionRemove {
			dec.Removed = slices.DeleteFunc(slices.Clone(dec.Removed), func(id string) bool { return slices.Contains(kept, id) })
			if len(dec.Removed) == 0 {
				continue
			}
		}
		decisions = append(decisions, dec)
	}
	m.mu.Lock()
	for _, id := range kept {
		delete(m.core.removing, id)
	}
	m.decisions = append(m.decisions, decisions...)
	if n := len(m.decisions) - keptDecisions; n > 0 {
		m.decisions = slices.Delete(m.decisions, 0, n)
	}
	m.mu.Unlock()
	for _, dec := range decisions {
		m.log.Info().Str("decision", dec.Kind).Int("target", dec.To).Int("previous_target", dec.From).
			Int("backlog", dec.Pending).Int("running", dec.Running).Int("executors", dec.Executors).
			Int("idle", dec.Idle).Strs("removed", dec.Removed).Msg(dec.String())
	}
	if p.Sync {
		err := m.d.RequestTotalExecutors(cctx, p.Target)
		m.mu.Lock()
		failing, retry := m.failing, err != nil && !errors.Is(err, ErrDriverStopped)
		m.resync, m.failing = retry, retry
		m.mu.Unlock()
		if retry && !failing { // once per run of failures
			m.log.Warn().Err(err).Int("target", p.Target).Msg("requesting the target number of executors; asking again until it is granted")
		}
	}
}

// AllocationStatus is the manager's state, for a UI.
type AllocationStatus struct {
	// Config is the manager's configuration.
	Config AllocationConfig
	// Target is the number of executors asked for.
	Target int
	// Time is when the manager last decided; Pending, Running, Executors
	// and Idle are the numbers it saw then (see AllocationDecision).
	Time                              time.Time
	Pending, Running, Executors, Idle int
	// Decisions are the last decisions (at most 100), newest first.
	Decisions []AllocationDecision
}

// Status returns the manager's state and its last decisions.
func (m *ExecutorAllocationManager) Status() AllocationStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := AllocationStatus{Config: m.core.cfg, Target: m.core.target, Time: m.last.Now, Pending: m.last.Pending,
		Running: m.last.Running, Executors: len(m.last.Executors)}
	for _, ex := range m.last.Executors {
		if ex.Idle {
			s.Idle++
		}
	}
	s.Decisions = make([]AllocationDecision, len(m.decisions))
	for i, d := range m.decisions {
		s.Decisions[len(m.decisions)-1-i] = d
	}
	return s
}

// allocationInput is the driver's state as the decision core sees it at
// now: the tasks waiting for a core and running, and the executors that
// may get tasks (not leaving), idle when ready with every core free.
func (d *Driver) allocationInput(now time.Time) allocationInput {
	in := allocationInput{Now: now}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, j := range d.sched.jobs {
		in.Pending += len(j.pending) - j.head
	}
	in.Running = len(d.sched.running)
	for _, ex := range d.executors {
		if ex.decommissioning || ex.pendingLoss {
			continue
		}
		idle := ex.ready && ex.freeCores == ex.totalCores
		in.Executors = append(in.Executors, executorLoad{ID: ex.id, Idle: idle, IdleSince: ex.idleSince})
	}
	return in
}
