package endpoints

// This file holds executor loss: removing, killing, disabling and replacing
// executors, and the loss reasons.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// ReasonDisassociated is the loss reason of an executor whose connection
// to the driver closed (Spark's text).
const ReasonDisassociated = "Remote RPC client disassociated. Likely due to containers exceeding thresholds, " +
	"or network issues. Check driver logs for WARN messages."

// ReasonKilled is the loss reason of an executor removed with KillExecutor.
const ReasonKilled = "Executor killed by driver."

// RemoveExecutor removes executor id with the loss reason: the driver tells
// it to stop, forgets it, and runs its tasks elsewhere. It does not wait.
func (d *Driver) RemoveExecutor(id, reason string) error {
	return d.ref.Send(&messages.LoseExecutor{ExecutorId: id, Reason: reason})
}

// KillExecutor removes executor id with the reason ReasonKilled.
func (d *Driver) KillExecutor(id string) error { return d.RemoveExecutor(id, ReasonKilled) }

func (d *Driver) removeExecutor(id, reason string) { d.removeExecutorIf(id, reason, nil) }

// busy reports whether a task runs on the executor (Spark's isExecutorBusy).
func (ex *executorData) busy() bool { return ex.ready && ex.freeCores < ex.totalCores }

// removeExecutorIf removes executor id unless keep, asked under the lock
// that the removal holds, says to keep it; it reports whether it removed it.
func (d *Driver) removeExecutorIf(id, reason string, keep func(*executorData) bool) bool {
	var out offerResult
	d.mu.Lock()
	ex := d.executors[id]
	if ex == nil {
		d.mu.Unlock()
		d.log.Debug().Str("executor", id).Str("reason", reason).Msg("asked to remove an unknown executor")
		return false
	}
	if keep != nil && keep(ex) {
		d.mu.Unlock()
		d.log.Info().Str("executor", id).Msg("Not removing executor: it is running tasks")
		return false
	}
	delete(d.executors, id)
	expected := ex.stopAsked && reason == ReasonDisassociated
	d.totalCores -= ex.totalCores
	d.notifyChanged()
	// Spark's exitCausedByApp: not when the driver killed or stopped it,
	// nor when it was leaving (decommissioned).
	byApp := !expected && !ex.stopAsked && reason != ReasonKilled && !ex.decommissioning
	d.sched.executorLost(ex, reason, byApp, &out)
	if !expected {
		d.metrics.lost.WithLabelValues(lossClass(reason)).Inc()
	}
	if d.bus.wanted() {
		for _, e := range out.endedAt {
			d.metrics.taskEnded(e) // publish does not see these
		}
		for _, e := range out.endedAt {
			d.bus.post(e)
		}
		out.endedAt = nil
		d.bus.post(ExecutorRemoved{Time: time.Now(), ExecutorID: id, Reason: reason})
	}
	d.makeOffers(nil, &out)
	d.publish(&out)
	d.unlockAndSend(out.launches, out.kills)
	if expected {
		d.log.Info().Str("executor", id).Msg("Executor shut down as the driver asked")
	} else {
		d.log.Warn().Str("executor", id).Str("reason", reason).Msg("Lost executor")
	}
	_ = ex.ref.Send(&messages.StopExecutor{})
	_ = d.hbRef.Send(&messages.ExecutorRemoved{ExecutorId: id})
	return true
}

// KillExecutorsOnHost removes every executor registered from host with the
// reason ReasonKilled and, with a cluster manager, has each one's container
// killed and replaced (Spark's KillExecutorsOnHost: a forced kill that
// neither lowers the cluster manager's target nor counts the executors'
// tasks as failed). It does not wait.
func (d *Driver) KillExecutorsOnHost(host string) error {
	return d.ref.Send(&messages.KillExecutorsOnHost{Host: host})
}

func (d *Driver) killExecutorsOnHost(host string) {
	ids := d.executorsWhere(func(ex *executorData) bool {
		if ex.host != host {
			return false
		}
		ex.killing = true // no removal below offers its tasks to another of these
		return true
	})
	if len(ids) > 0 {
		d.log.Info().Str("host", host).Strs("executors", ids).Msg("Killing the executors of a host")
	}
	for _, id := range ids {
		if d.removeExecutorIf(id, ReasonKilled, nil) {
			d.killAndReplace(id, "its host "+host+" is being killed")
		}
	}
}

// executorsWhere returns the ids of the registered executors that match,
// in order. match runs under d.mu, so it may mark the executors it takes.
func (d *Driver) executorsWhere(match func(*executorData) bool) []string {
	d.mu.Lock()
	var ids []string
	for id, ex := range d.executors {
		if match(ex) {
			ids = append(ids, id)
		}
	}
	d.mu.Unlock()
	slices.Sort(ids)
	return ids
}

// isExecutorAlive reports whether executor id is registered and alive
// (Spark's isExecutorActive, the answer to IsExecutorAlive).
func (d *Driver) isExecutorAlive(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	ex := d.executors[id]
	return ex != nil && ex.alive()
}

// stopExecutors tells every registered executor to shut down. Their
// disconnects are then expected: each is removed, logged at info level and
// not counted as lost.
func (d *Driver) stopExecutors() {
	d.mu.Lock()
	refs := make([]*actor.Ref, 0, len(d.executors))
	for _, ex := range d.executors {
		ex.stopAsked = true
		refs = append(refs, ex.ref)
	}
	d.mu.Unlock()
	d.log.Info().Int("executors", len(refs)).Msg("Asking each executor to shut down")
	for _, r := range refs {
		_ = r.Send(&messages.StopExecutor{})
	}
}

// ReasonPendingLoss is the reason of the tasks a driver with a cluster
// manager re-runs when an executor's connection closes, while it asks the
// cluster manager why the executor went away.
const ReasonPendingLoss = "Pending loss reason."

// KillExecutors removes the registered executors among ids from the driver
// with the reason ReasonKilled ("Executor killed by driver."): each is told
// to stop and its tasks run elsewhere. Then, with a cluster manager, it asks
// the cluster manager to release them. It returns the ids it killed, in the
// order given; unknown ids are skipped, as in Spark. Without a cluster
// manager the executors are only removed (they exit on StopExecutor).
// While an ExecutorAllocationManager runs on d it returns
// ErrDynamicAllocation and kills none: the manager owns the cluster
// manager's target, which the kill would lower behind its back (below
// minExecutors, for good).
func (d *Driver) KillExecutors(ctx context.Context, ids []string) ([]string, error) {
	if d.allocating.Load() > 0 {
		return nil, ErrDynamicAllocation
	}
	return d.killExecutors(ctx, ids, true)
}

// killExecutors is KillExecutors; without force (dynamic allocation's
// releases, Spark's force = false) it skips the executors running a task.
func (d *Driver) killExecutors(ctx context.Context, ids []string, force bool) ([]string, error) {
	if d.isStopped() {
		return nil, ErrDriverStopped
	}
	d.mu.Lock()
	known := make([]string, 0, len(ids))
	for _, id := range ids {
		if d.executors[id] != nil && !slices.Contains(known, id) {
			known = append(known, id)
		}
	}
	d.mu.Unlock()
	for _, id := range ids {
		if !slices.Contains(known, id) {
			d.log.Warn().Str("executor", id).Msg("Executor to kill does not exist")
		}
	}
	if force {
		for _, id := range known {
			if _, err := d.ref.AskSync(ctx, &messages.RemoveExecutor{ExecutorId: id, Reason: ReasonKilled}); err != nil {
				return nil, fmt.Errorf("killing executor %s: %w", id, err)
			}
		}
	} else {
		// Whether an executor is idle is asked under the lock its removal
		// holds: one that took a task since it was seen idle stays.
		idle := known[:0]
		for _, id := range known {
			if d.removeExecutorIf(id, ReasonKilled, (*executorData).busy) {
				idle = append(idle, id)
			}
		}
		known = idle
	}
	if d.cm == nil || len(known) == 0 {
		return known, nil
	}
	d.log.Info().Strs("executors", known).Msg("Asking the cluster manager to kill executors")
	if err := d.cm.KillExecutors(ctx, known); err != nil {
		return known, fmt.Errorf("asking the cluster manager to kill executors %v: %w", known, err)
	}
	return known, nil
}

// disableExecutor is what a driver with a cluster manager does when an
// executor's connection closes (Spark's disableExecutor): the executor gets
// no more tasks, its running tasks run elsewhere, and the cluster manager is
// asked why it went away; the executor is removed with that reason.
func (d *Driver) disableExecutor(id string) {
	var out offerResult
	d.mu.Lock()
	if ex := d.executors[id]; d.stopped || (ex != nil && ex.stopAsked) {
		// Executors disconnect as the driver stops them: no need to ask.
		d.mu.Unlock()
		d.removeExecutor(id, ReasonDisassociated)
		return
	}
	ex := d.executors[id]
	if ex == nil || ex.pendingLoss {
		d.mu.Unlock()
		return
	}
	ex.pendingLoss = true
	d.notifyChanged()
	d.sched.executorLost(ex, ReasonPendingLoss, false, &out)
	d.makeOffers(nil, &out)
	d.publish(&out)
	d.bg.Add(1) // under d.mu: Stop sets d.stopped under it before it waits
	d.unlockAndSend(out.launches, out.kills)
	d.log.Warn().Str("executor", id).Msg("Executor disconnected; asking the cluster manager why")
	go func() {
		defer d.bg.Done()
		ctx, cancel := context.WithTimeout(d.bgCtx, d.env.AskTimeout().Duration)
		defer cancel()
		reason, err := d.cm.ExecutorLossReason(ctx, id)
		if err != nil || reason == "" {
			if err != nil {
				d.log.Warn().Err(err).Str("executor", id).Msg("could not get the executor's loss reason")
			}
			reason = ReasonDisassociated
		}
		_ = d.ref.Send(&messages.LoseExecutor{ExecutorId: id, Reason: reason})
		if err != nil && d.bgCtx.Err() == nil {
			// No reason: its container may still run, unreachable (a hung
			// process, a broken network). Do not leave it holding its
			// resources: kill it and ask for another.
			d.killAndReplace(id, "its connection closed and the cluster manager gave no loss reason")
		}
	}()
}

// killAndReplace asks the cluster manager, on a goroutine of its own, to
// kill executor id's container and start another executor in its place
// (Spark's killAndReplaceExecutor). The caller has removed the executor or
// is removing it. Without a cluster manager, or once the driver stops, it
// does nothing.
func (d *Driver) killAndReplace(id, why string) {
	if d.cm == nil {
		return
	}
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return
	}
	d.bg.Add(1) // under d.mu: Stop sets d.stopped under it before it waits
	d.mu.Unlock()
	d.log.Warn().Str("executor", id).Str("why", why).Msg("Asking the cluster manager to kill the executor and replace it")
	go func() {
		defer d.bg.Done()
		ctx, cancel := context.WithTimeout(d.bgCtx, d.env.AskTimeout().Duration)
		defer cancel()
		if err := d.cm.KillAndReplaceExecutors(ctx, []string{id}); err != nil {
			d.log.Warn().Err(err).Str("executor", id).Msg("the cluster manager could not kill and replace the executor")
		}
	}()
}

// DecommissionExecutor decommissions executor id, as Spark's driver does
// when its cluster manager says the executor's host is going away (a
// Kubernetes pod being deleted): the executor gets no new tasks, is told
// to finish its running ones and leave (DecommissionExecutor), and its
// tasks move only once it is gone. reason is logged. It reports whether
// the executor was known.
func (d *Driver) DecommissionExecutor(id, reason string) bool {
	d.mu.Lock()
	ex := d.executors[id]
	if ex != nil {
		ex.decommissioning = true
		d.notifyChanged()
	}
	d.mu.Unlock()
	if ex == nil {
		return false
	}
	d.log.Info().Str("executor", id).Str("reason", reason).Msg("decommissioning executor; it gets no new tasks")
	if err := ex.ref.Send(&messages.DecommissionExecutor{}); err != nil {
		d.log.Warn().Err(err).Str("executor", id).Msg("could not tell the executor to decommission")
	}
	return true
}
