package endpoints

import (
	"slices"
	"testing"
	"time"
)

// fakeClock is the decision core's time, moved by the test.
type fakeClock struct{ now time.Time }

func (c *fakeClock) advance(d time.Duration) time.Time { c.now = c.now.Add(d); return c.now }

func testAllocationConfig() AllocationConfig {
	return AllocationConfig{Enabled: true, MinExecutors: 0, MaxExecutors: 4, InitialExecutors: 0, IdleTimeout: 2 * time.Second,
		BacklogTimeout: time.Second, SustainedBacklogTimeout: time.Second, AllocationRatio: 1, TasksPerExecutor: 1}
}

// executorsLoad returns busy executors running tasks then idle ones, idle
// since the given time, with ids "01", "02", ...
func executorsLoad(busy int, idle int, since time.Time) []executorLoad {
	var out []executorLoad
	for i := range busy + idle {
		ex := executorLoad{ID: itoa(i + 1)}
		if i >= busy {
			ex.Idle, ex.IdleSince = true, since
		}
		out = append(out, ex)
	}
	return out
}

func itoa(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

func kinds(p allocationPlan) []string {
	var out []string
	for _, d := range p.Decisions {
		out = append(out, d.Kind)
	}
	return out
}

// A backlog of 200 tasks ramps the target up 1, 2, 4 per sustained interval
// (1 -> 3 -> 4, bounded by maxExecutors), and once the tasks are done and
// the executors idle past the timeout, the target drops to 0 and all four
// are released, once.
func TestAllocationCoreRampsUpAndReleasesIdleExecutors(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	c := newAllocationCore(testAllocationConfig())
	type step struct {
		after            time.Duration
		pending, running int
		busy, idle       int
		idleSince        time.Duration // before now
		wantTarget       int
		wantKinds        []string
		wantKill         []string
		wantSync         bool
	}
	steps := []step{
		{after: 0, pending: 200, wantTarget: 0, wantKinds: []string{DecisionInitial}, wantSync: true},
		{after: 500 * time.Millisecond, pending: 200, wantTarget: 0},
		{after: 500 * time.Millisecond, pending: 200, wantTarget: 1, wantKinds: []string{DecisionAdd}, wantSync: true},
		{after: 500 * time.Millisecond, pending: 199, running: 1, busy: 1, wantTarget: 1},
		{after: 500 * time.Millisecond, pending: 199, running: 1, busy: 1, wantTarget: 3, wantKinds: []string{DecisionAdd}, wantSync: true},
		{after: time.Second, pending: 197, running: 3, busy: 3, wantTarget: 4, wantKinds: []string{DecisionAdd}, wantSync: true},
		{after: time.Second, pending: 196, running: 4, busy: 4, wantTarget: 4}, // at maxExecutors
		{after: 10 * time.Second, pending: 0, running: 2, busy: 2, idle: 2, wantTarget: 2, wantKinds: []string{DecisionLower}, wantSync: true},
		{after: time.Second, pending: 0, idle: 4, idleSince: time.Second, wantTarget: 0, wantKinds: []string{DecisionLower}, wantSync: true},
		{after: time.Second, pending: 0, idle: 4, idleSince: 2 * time.Second, wantTarget: 0, wantKinds: []string{DecisionRemove},
			wantKill: []string{"01", "02", "03", "04"}, wantSync: true},
		{after: 100 * time.Millisecond, pending: 0, idle: 4, idleSince: 3 * time.Second, wantTarget: 0}, // being released
		{after: 100 * time.Millisecond, pending: 0, wantTarget: 0},
	}
	for i, s := range steps {
		now := clock.advance(s.after)
		in := allocationInput{Now: now, Pending: s.pending, Running: s.running, Executors: executorsLoad(s.busy, s.idle, now.Add(-s.idleSince))}
		p := c.step(in)
		if p.Target != s.wantTarget || !slices.Equal(kinds(p), s.wantKinds) || !slices.Equal(p.Kill, s.wantKill) || p.Sync != s.wantSync {
			t.Fatalf("step %d: target %d, decisions %v, kill %v, sync %v; want %d, %v, %v, %v (%v)", i, p.Target, kinds(p), p.Kill, p.Sync,
				s.wantTarget, s.wantKinds, s.wantKill, s.wantSync, p.Decisions)
		}
	}
	if len(c.removing) != 0 {
		t.Fatalf("released executors still tracked after they left: %v", c.removing)
	}
}

func TestAllocationCoreDecisions(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name       string
		cfg        func(*AllocationConfig)
		inputs     []allocationInput
		wantTarget int
		wantKill   []string
	}{
		{
			name: "the allocation ratio and cores per executor bound what the backlog needs",
			cfg:  func(c *AllocationConfig) { c.MaxExecutors, c.AllocationRatio, c.TasksPerExecutor = 100, 0.5, 2 },
			inputs: []allocationInput{{Now: t0, Pending: 10}, {Now: t0.Add(time.Second), Pending: 10}, {Now: t0.Add(2 * time.Second), Pending: 10},
				{Now: t0.Add(3 * time.Second), Pending: 10}, {Now: t0.Add(4 * time.Second), Pending: 10}},
			wantTarget: 3, // ceil(10 * 0.5 / 2)
		},
		{
			name: "minExecutors are kept when idle",
			cfg:  func(c *AllocationConfig) { c.MinExecutors, c.InitialExecutors = 2, 2 },
			inputs: []allocationInput{{Now: t0, Executors: executorsLoad(0, 4, t0)},
				{Now: t0.Add(3 * time.Second), Executors: executorsLoad(0, 4, t0)}},
			wantTarget: 2, wantKill: []string{"01", "02"},
		},
		{
			name: "the initial target stands until an executor idles out",
			cfg:  func(c *AllocationConfig) { c.InitialExecutors = 3 },
			inputs: []allocationInput{{Now: t0, Executors: executorsLoad(0, 3, t0)},
				{Now: t0.Add(time.Second), Executors: executorsLoad(0, 3, t0)}},
			wantTarget: 3,
		},
		{
			name: "an executor running a task is not released",
			inputs: []allocationInput{{Now: t0, Running: 1, Executors: executorsLoad(1, 1, t0)},
				{Now: t0.Add(5 * time.Second), Running: 1, Executors: executorsLoad(1, 1, t0)}},
			wantTarget: 0, wantKill: []string{"02"},
		},
		{
			name: "a backlog that clears before the backlog timeout asks for nothing",
			inputs: []allocationInput{{Now: t0, Pending: 5}, {Now: t0.Add(900 * time.Millisecond)},
				{Now: t0.Add(1100 * time.Millisecond)}},
			wantTarget: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testAllocationConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			c := newAllocationCore(cfg)
			var kill []string
			for _, in := range tt.inputs {
				p := c.step(in)
				kill = append(kill, p.Kill...)
			}
			if c.target != tt.wantTarget || !slices.Equal(kill, tt.wantKill) {
				t.Fatalf("target %d, released %v; want %d, %v", c.target, kill, tt.wantTarget, tt.wantKill)
			}
		})
	}
}

func TestAllocationDecisionSaysItsNumbers(t *testing.T) {
	d := AllocationDecision{Kind: DecisionAdd, From: 1, To: 3, Pending: 197, Running: 3, Executors: 3, Idle: 0}
	want := "Requesting 2 new executors because tasks are backlogged: target 1 -> 3 (backlog 197 tasks, 3 running, 3 executors, 0 idle)"
	if got := d.String(); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}
