package endpoints

// This file holds offers and launch: resource offers of the executors' free
// cores, task status updates, and the LaunchTask and KillTask messages they
// lead to.

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// unlockAndSend releases d.mu, which the caller holds, and sends the
// LaunchTasks and KillTasks of the scheduling step it made under it. The
// messages of two steps leave in the order of the steps, whichever
// goroutines made them: d.sendMu is taken before d.mu is released. So a
// KillTask decided after a launch (a job cancelled from its caller's
// goroutine, say) never overtakes that LaunchTask on its way to the
// executor, which would otherwise find nothing to kill and then run the
// task.
func (d *Driver) unlockAndSend(ls []launch, ks []kill) {
	d.sendMu.Lock()
	d.mu.Unlock()
	var failed []launch
	var errs []error
	for _, l := range ls {
		if err := l.ref.Send(l.msg); err != nil {
			failed, errs = append(failed, l), append(errs, err)
		}
	}
	for _, k := range ks {
		if err := k.ref.Send(k.msg); err != nil {
			d.log.Debug().Err(err).Int64("tid", k.msg.TaskId).Msg("could not send KillTask")
		}
	}
	d.sendMu.Unlock()
	for i, l := range failed {
		if errors.Is(errs[i], actor.ErrMessageTooLarge) {
			// The task, not the executor, is at fault: it fails, as its
			// executor would report it, and its job goes on or aborts.
			_ = d.ref.Send(&messages.StatusUpdate{ExecutorId: l.exec, TaskId: l.msg.TaskId, State: messages.TaskState_TASK_STATE_FAILED,
				TaskCpus: l.msg.Cpus, Error: "Could not launch the task: " + errs[i].Error()})
			continue
		}
		// The executor cannot be reached: remove it (with a cluster
		// manager, disable it and ask why), so that its tasks run
		// elsewhere. This takes d.mu, so it runs once d.sendMu is free.
		d.log.Warn().Err(errs[i]).Int64("tid", l.msg.TaskId).Str("executor", l.exec).Msg("could not launch task")
		if d.cm != nil {
			d.disableExecutor(l.exec)
			continue
		}
		_ = d.ref.Send(&messages.LoseExecutor{ExecutorId: l.exec, Reason: "Could not launch a task: " + errs[i].Error()})
	}
}

// publish posts the events of a scheduling step; it runs under d.mu so
// that events keep the order of the state changes.
func (d *Driver) publish(out *offerResult) {
	d.metrics.record(out)
	for _, j := range out.ended {
		if j.err != nil {
			d.log.Error().Err(j.err).Int64("job", j.id).Msg("job failed")
		}
	}
	if !d.bus.wanted() {
		return
	}
	for _, e := range out.endedAt {
		d.bus.post(e)
	}
	// A job's TaskStarts come before its JobEnd: a step may launch a task
	// of a job that it then aborts (a later task too large).
	for _, a := range out.started {
		d.bus.post(TaskStart{Time: a.launched, JobID: a.job.id, TaskID: a.id, Partition: a.partition,
			Attempt: a.attempt, ExecutorID: a.exec.id})
	}
	for _, j := range out.ended {
		d.postJobEnd(j)
	}
}

// makeOffers offers the free cores of only (or of every active executor
// when only is nil) to the pending tasks. It runs under d.mu.
func (d *Driver) makeOffers(only *executorData, out *offerResult) {
	if !d.sched.hasPending() {
		return
	}
	var offers []*executorData
	if only != nil {
		if !only.active() || only.freeCores < d.sched.cpus {
			return
		}
		offers = []*executorData{only}
	} else {
		offers = make([]*executorData, 0, len(d.executors))
		for _, ex := range d.executors {
			if ex.active() && ex.freeCores >= d.sched.cpus {
				offers = append(offers, ex)
			}
		}
		d.shuffle(offers)
	}
	if len(offers) > 0 {
		d.metrics.offers.Add(float64(len(offers)))
		d.sched.resourceOffers(offers, out)
	}
}

// shuffle puts offers in a random order, as Spark does, drawn from the
// driver's random source (WithRand): sorted by executor id first, so that
// the order depends on the source alone, not on the map's.
func (d *Driver) shuffle(offers []*executorData) {
	if len(offers) < 2 {
		return
	}
	slices.SortFunc(offers, func(a, b *executorData) int { return strings.Compare(a.id, b.id) })
	swap := func(i, j int) { offers[i], offers[j] = offers[j], offers[i] }
	if d.rand != nil {
		d.rand.Shuffle(len(offers), swap)
		return
	}
	rand.Shuffle(len(offers), swap)
}

// reviveOffers offers every active executor's free cores to the pending
// tasks (ReviveOffers).
func (d *Driver) reviveOffers() {
	out := getOfferResult()
	defer putOfferResult(out)
	d.mu.Lock()
	d.makeOffers(nil, out)
	d.publish(out)
	d.unlockAndSend(out.launches, out.kills)
}

func (d *Driver) statusUpdate(m *messages.StatusUpdate, peer string) {
	switch m.GetState() {
	case messages.TaskState_TASK_STATE_LAUNCHING:
		return
	case messages.TaskState_TASK_STATE_RUNNING:
		d.mu.Lock()
		if a := d.sched.running[m.GetTaskId()]; a != nil && a.exec.id == m.GetExecutorId() && a.exec.from(peer) {
			a.running = true
		}
		d.mu.Unlock()
		return
	}
	out := getOfferResult()
	defer putOfferResult(out)
	d.mu.Lock()
	a := d.sched.statusUpdate(m, peer, out)
	if a != nil {
		if ex := a.exec; d.executors[ex.id] == ex {
			ex.freeCores += d.sched.cpus
			if ex.freeCores == ex.totalCores {
				ex.idleSince = time.Now()
			}
			// A task that did not finish runs again: offer every
			// executor, as Spark's handleFailedTask revives offers (its
			// own may get no task: decommissioning, say).
			if len(out.ended) > 0 || m.GetState() != messages.TaskState_TASK_STATE_FINISHED {
				d.makeOffers(nil, out)
			} else {
				d.makeOffers(ex, out)
			}
		} else if m.GetState() != messages.TaskState_TASK_STATE_FINISHED {
			d.makeOffers(nil, out)
		}
	}
	d.publish(out)
	if a != nil {
		d.sched.release(a)
	}
	d.unlockAndSend(out.launches, out.kills)
	if a == nil {
		d.log.Debug().Int64("tid", m.GetTaskId()).Str("executor", m.GetExecutorId()).Msg("ignored an update of an unknown task")
	}
}
