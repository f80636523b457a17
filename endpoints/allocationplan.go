package endpoints

// This file holds the decision core of dynamic allocation: a function of the
// time, the task backlog and the executors' idle times that says which target
// to ask the cluster manager for and which executors to release. It does no
// I/O (the ExecutorAllocationManager's loop does).

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// allocationInput is what the decision core sees at one step.
type allocationInput struct {
	Now time.Time
	// Pending is the number of tasks waiting for a core (the backlog);
	// Running the number of tasks running.
	Pending, Running int
	// Executors are the registered executors.
	Executors []executorLoad
}

// executorLoad is one registered executor as the decision core sees it.
type executorLoad struct {
	ID string
	// Idle is true when the executor is ready and runs no task, since
	// IdleSince.
	Idle      bool
	IdleSince time.Time
}

// Kinds of AllocationDecision.
const (
	// DecisionInitial is the first request: the initial target.
	DecisionInitial = "initial"
	// DecisionAdd raises the target: the backlog lasted.
	DecisionAdd = "add"
	// DecisionLower lowers the target to what the tasks need.
	DecisionLower = "lower"
	// DecisionRemove releases executors idle past the idle timeout.
	DecisionRemove = "remove"
)

// AllocationDecision is one decision of the ExecutorAllocationManager, with
// the numbers it was taken on.
type AllocationDecision struct {
	Time time.Time
	// Kind is DecisionInitial, DecisionAdd, DecisionLower or
	// DecisionRemove.
	Kind string
	// From and To are the target before and after.
	From, To int
	// Pending, Running, Executors and Idle are the backlog (tasks waiting
	// for a core), the running tasks, the executors and the idle ones.
	Pending, Running, Executors, Idle int
	// Removed are the executors released (DecisionRemove).
	Removed []string
}

// String says the decision in a sentence with its numbers.
func (d AllocationDecision) String() string {
	nums := fmt.Sprintf("(backlog %d tasks, %d running, %d executors, %d idle)", d.Pending, d.Running, d.Executors, d.Idle)
	switch d.Kind {
	case DecisionInitial:
		return fmt.Sprintf("Requesting an initial target of %d executors %s", d.To, nums)
	case DecisionAdd:
		return fmt.Sprintf("Requesting %d new executors because tasks are backlogged: target %d -> %d %s", d.To-d.From, d.From, d.To, nums)
	case DecisionLower:
		return fmt.Sprintf("Lowering the target number of executors to %d (previously %d) because not all requested executors are actually needed %s",
			d.To, d.From, nums)
	case DecisionRemove:
		return fmt.Sprintf("Removing %d idle executors (%s), target %d %s", len(d.Removed), strings.Join(d.Removed, ", "), d.To, nums)
	}
	return d.Kind + " " + nums
}

// allocationPlan is what one step decided: the target to ask for (when
// Sync), the executors to release, and the decisions taken.
type allocationPlan struct {
	Target    int
	Sync      bool
	Kill      []string
	Decisions []AllocationDecision
}

// allocationCore is Spark's ExecutorAllocationManager without I/O: step
// takes the state of the driver at a time and returns what to do.
type allocationCore struct {
	cfg    AllocationConfig
	target int
	// toAdd is the number of executors the next add asks for (1, 2, 4, ...).
	toAdd int
	// addTime is when the next add is due; zero while there is no backlog.
	addTime time.Time
	// initializing is true until a backlog is seen or an executor idles
	// out: the initial target is not lowered before.
	initializing bool
	synced       bool            // the target was asked for at least once
	removing     map[string]bool // released, until they are gone
}

func newAllocationCore(cfg AllocationConfig) *allocationCore {
	return &allocationCore{cfg: cfg, target: cfg.InitialExecutors, toAdd: 1, initializing: true, removing: make(map[string]bool)}
}

// step decides at in.Now, as Spark's schedule(): the backlog timer, the
// target (lowered to what the tasks need, or raised as the backlog lasts),
// then the executors idle past the idle timeout, released down to the
// target and minExecutors.
func (c *allocationCore) step(in allocationInput) allocationPlan {
	var p allocationPlan
	live, idle := c.track(in)
	base := AllocationDecision{Time: in.Now, Pending: in.Pending, Running: in.Running, Executors: live, Idle: idle}
	if !c.synced {
		c.synced = true
		p.Sync = true
		d := base
		d.Kind, d.From, d.To = DecisionInitial, c.target, c.target
		p.Decisions = append(p.Decisions, d)
	}
	if in.Pending > 0 {
		c.initializing = false
		if c.addTime.IsZero() {
			c.addTime = in.Now.Add(c.cfg.BacklogTimeout)
		}
	} else {
		c.addTime, c.toAdd = time.Time{}, 1
	}
	timedOut := c.timedOut(in)
	if len(timedOut) > 0 {
		c.initializing = false
	}
	if d, ok := c.updateTarget(in, live, base); ok {
		p.Sync = true
		p.Decisions = append(p.Decisions, d)
	}
	if kill := c.remove(timedOut, live); len(kill) > 0 {
		p.Kill, p.Sync = kill, true // the target is asked again: a kill may lower it
		d := base
		d.Kind, d.From, d.To, d.Removed = DecisionRemove, c.target, c.target, kill
		p.Decisions = append(p.Decisions, d)
	}
	p.Target = c.target
	return p
}

// track forgets released executors that are gone and returns the number
// of executors not being released, and of idle ones among them.
func (c *allocationCore) track(in allocationInput) (live, idle int) {
	present := make(map[string]bool, len(in.Executors))
	for _, ex := range in.Executors {
		present[ex.ID] = true
		if c.removing[ex.ID] {
			continue
		}
		live++
		if ex.Idle {
			idle++
		}
	}
	for id := range c.removing {
		if !present[id] {
			delete(c.removing, id)
		}
	}
	return live, idle
}

// maxNeeded is the number of executors the tasks need: one core per
// waiting or running task, scaled by the allocation ratio.
func (c *allocationCore) maxNeeded(in allocationInput) int {
	tasks := float64(in.Pending+in.Running) * c.cfg.AllocationRatio
	per := float64(c.cfg.TasksPerExecutor)
	n := int(tasks / per)
	if float64(n)*per < tasks {
		n++
	}
	return n
}

// updateTarget lowers the target to what the tasks need, or raises it when
// an add is due (Spark's updateAndSyncNumExecutorsTarget); it reports a
// change.
func (c *allocationCore) updateTarget(in allocationInput, live int, base AllocationDecision) (AllocationDecision, bool) {
	if c.initializing {
		return AllocationDecision{}, false
	}
	needed := c.maxNeeded(in)
	old := c.target
	d := base
	d.From = old
	if needed < c.target {
		c.target = max(needed, c.cfg.MinExecutors)
		c.toAdd = 1
		d.Kind, d.To = DecisionLower, c.target
		return d, c.target != old
	}
	if c.addTime.IsZero() || in.Now.Before(c.addTime) {
		return AllocationDecision{}, false
	}
	delta := c.add(needed, live)
	c.addTime = in.Now.Add(c.cfg.SustainedBacklogTimeout)
	d.Kind, d.To = DecisionAdd, c.target
	return d, delta > 0
}

// add raises the target by toAdd, bounded by what the tasks need and
// maxExecutors, and doubles toAdd when it was all granted (Spark's
// addExecutors). It returns the change of the target.
func (c *allocationCore) add(needed, live int) int {
	if c.target >= c.cfg.MaxExecutors {
		c.toAdd = 1
		return 0
	}
	old := c.target
	// No point in ramping up to the executors already there.
	target := max(c.target, live) + c.toAdd
	target = min(target, needed)
	target = max(min(target, c.cfg.MaxExecutors), c.cfg.MinExecutors)
	c.target = target
	delta := target - old
	if delta == c.toAdd {
		c.toAdd *= 2
	} else {
		c.toAdd = 1
	}
	return delta
}

// timedOut returns the executors idle for at least the idle timeout, not
// being released yet, sorted by id.
func (c *allocationCore) timedOut(in allocationInput) []string {
	var out []string
	for _, ex := range in.Executors {
		if ex.Idle && !c.removing[ex.ID] && in.Now.Sub(ex.IdleSince) >= c.cfg.IdleTimeout {
			out = append(out, ex.ID)
		}
	}
	slices.SortFunc(out, compareExecutorIDs)
	return out
}

// remove picks the executors of timedOut to release: as many as leave at
// least minExecutors and the target (Spark's removeExecutors).
func (c *allocationCore) remove(timedOut []string, live int) []string {
	var kill []string
	left := live
	for _, id := range timedOut {
		if left-1 < c.cfg.MinExecutors || left-1 < c.target {
			continue
		}
		kill = append(kill, id)
		c.removing[id] = true
		left--
	}
	return kill
}

// compareExecutorIDs orders executor ids as numbers where they are ("2"
// before "10"), as Driver.Executors does.
func compareExecutorIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
