package endpoints

// This file holds offers and launch: resource offers of the executors' free
// cores, task status updates, and the LaunchTask and KillTask messages they
// lead to.

import "github.com/sparkrpc/sparkrpc/messages"

func (d *Driver) sendLaunches(ls []launch) {
	for _, l := range ls {
		if err := l.ref.Send(l.msg); err != nil {
			// The executor cannot be reached: remove it (with a cluster
			// manager, disable it and ask why), so that its tasks run
			// elsewhere.
			d.log.Warn().Err(err).Int64("tid", l.msg.TaskId).Str("executor", l.exec).Msg("could not launch task")
			if d.cm != nil {
				d.disableExecutor(l.exec)
				continue
			}
			_ = d.ref.Send(&messages.RemoveExecutor{ExecutorId: l.exec, Reason: "Could not launch a task: " + err.Error()})
		}
	}
}

func (d *Driver) sendKills(ks []kill) {
	for _, k := range ks {
		if err := k.ref.Send(k.msg); err != nil {
			d.log.Debug().Err(err).Int64("tid", k.msg.TaskId).Msg("could not send KillTask")
		}
	}
}

// killThroughLoop sends kills that were decided off the driver endpoint's
// loop (a cancelled job, the driver's stop) to that endpoint, which
// forwards each to its executor (killTask). Sent to the executors
// directly, a KillTask could overtake its task's LaunchTask: the loop sends
// the launches of a scheduling step after it released d.mu, where
// killRunning already sees the attempt, and an executor ignores the kill of
// a task it has not been sent. The loop sends a step's launches before it
// handles its next message, so a kill that goes through it comes after.
func (d *Driver) killThroughLoop(ks []kill) {
	for _, k := range ks {
		if err := d.ref.Send(k.msg); err != nil {
			d.log.Debug().Err(err).Int64("tid", k.msg.TaskId).Msg("could not send KillTask")
		}
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
	for _, j := range out.ended {
		d.postJobEnd(j)
	}
	for _, a := range out.started {
		d.bus.post(TaskStart{Time: a.launched, JobID: a.job.id, TaskID: a.id, Partition: a.partition,
			Attempt: a.attempt, ExecutorID: a.exec.id})
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
		for _, ex := range d.executors { // map order: a shuffle, as in Spark
			if ex.active() && ex.freeCores >= d.sched.cpus {
				offers = append(offers, ex)
			}
		}
	}
	if len(offers) > 0 {
		d.metrics.offers.Add(float64(len(offers)))
		d.sched.resourceOffers(offers, out)
	}
}

// reviveOffers offers every active executor's free cores to the pending
// tasks (ReviveOffers).
func (d *Driver) reviveOffers() {
	out := getOfferResult()
	defer putOfferResult(out)
	d.mu.Lock()
	d.makeOffers(nil, out)
	d.publish(out)
	d.mu.Unlock()
	d.sendLaunches(out.launches)
	d.sendKills(out.kills)
}

func (d *Driver) statusUpdate(m *messages.StatusUpdate) {
	switch m.GetState() {
	case messages.TaskState_TASK_STATE_LAUNCHING, messages.TaskState_TASK_STATE_RUNNING:
		return
	}
	out := getOfferResult()
	defer putOfferResult(out)
	d.mu.Lock()
	a := d.sched.statusUpdate(m, out)
	if a != nil {
		if ex := a.exec; d.executors[ex.id] == ex {
			ex.freeCores += d.sched.cpus
			if len(out.ended) > 0 {
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
	d.mu.Unlock()
	if a == nil {
		d.log.Debug().Int64("tid", m.GetTaskId()).Str("executor", m.GetExecutorId()).Msg("ignored an update of an unknown task")
	}
	d.sendLaunches(out.launches)
	d.sendKills(out.kills)
}
