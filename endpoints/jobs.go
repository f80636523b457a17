package endpoints

// This file holds jobs: RunJob, job cancellation and KillTask.

import (
	"context"
	"fmt"
	"time"

	"github.com/sparkrpc/sparkrpc/messages"
)

// await waits until job j has ended, cancelling it when ctx ends first.
// Every spark.starvation.timeout until j launches a task, it says in the
// log that the job waits for resources, as Spark does: with no executor,
// or none with enough cores, a job would otherwise wait without a word.
func (d *Driver) await(ctx context.Context, j *job) {
	starve := time.NewTicker(d.starvation)
	defer starve.Stop()
	for {
		select {
		case <-j.done:
			return
		case <-ctx.Done():
			d.cancelJob(j, context.Cause(ctx))
			<-j.done
			return
		case <-starve.C:
			d.mu.Lock()
			waiting := j.launches == 0 && !j.ended
			d.mu.Unlock()
			if !waiting {
				starve.Stop()
				continue
			}
			d.log.Warn().Int64("job", j.id).Msg("Initial job has not accepted any resources; " +
				"check your cluster UI to ensure that workers are registered and have sufficient resources")
		}
	}
}

// RunJob runs one task of the registered function taskName per payload
// (partition i gets payloads[i]) on the executors, and returns the results
// in partition order. A failed task is retried up to spark.task.maxFailures
// times in all; the job then fails with a *JobAbortedError carrying the last
// error; a job whose results add up to more than spark.driver.maxResultSize
// is aborted with ErrResultTooLarge. Tasks wait for executors: with none registered, RunJob waits until
// one is ready or ctx ends, and says so in the driver's log every
// spark.starvation.timeout until the job launches a task. Cancelling ctx kills the job's running tasks and
// returns ctx's cause.
func (d *Driver) RunJob(ctx context.Context, taskName string, payloads [][]byte) ([][]byte, error) {
	if _, ok := LookupTask(taskName); !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTask, taskName)
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return nil, ErrDriverStopped
	}
	j := d.sched.submit(taskName, payloads, d.files.snapshot())
	if d.bus.wanted() {
		d.bus.post(JobStart{Time: j.started, JobID: j.id, TaskName: taskName, NumTasks: len(payloads)})
	}
	if len(payloads) == 0 {
		d.sched.end(j, nil)
		d.postJobEnd(j)
		d.mu.Unlock()
		return [][]byte{}, nil
	}
	d.mu.Unlock()
	if err := d.ref.Send(&messages.ReviveOffers{}); err != nil {
		d.cancelJob(j, err)
		return nil, fmt.Errorf("job %d: %w", j.id, err)
	}
	d.await(ctx, j)
	// A job ends under d.mu, in the scheduling step that also posts its last
	// events (the final TaskEnd, JobEnd) to the listener bus: reading its
	// outcome under the lock returns after that step, so that, as in Spark,
	// a job's JobEnd is posted before RunJob returns.
	d.mu.Lock()
	results, err := j.results, j.err
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return results, nil
}

// cancelJob ends j with err unless it has ended, and kills its tasks.
func (d *Driver) cancelJob(j *job, err error) {
	d.mu.Lock()
	var kills []kill
	if !j.ended {
		d.sched.end(j, err)
		kills = d.sched.killRunning(j, "Job cancelled: "+err.Error())
		d.postJobEnd(j)
	}
	d.unlockAndSend(nil, kills)
}

func (d *Driver) postJobEnd(j *job) {
	if d.bus.wanted() {
		now := time.Now()
		d.bus.post(JobEnd{Time: now, JobID: j.id, Err: j.err, Duration: now.Sub(j.started)})
	}
}

// KillTask kills the running task taskID (its id in TaskStart) with
// reason: its executor cancels the task's context, and the task runs again
// (a killed attempt is not a failure). It does not wait. It returns
// ErrTaskNotRunning for a task that is not running, ErrDriverStopped once
// the driver is stopping.
func (d *Driver) KillTask(taskID int64, reason string) error {
	d.mu.Lock()
	stopped := d.stopped
	a := d.sched.running[taskID]
	var exec string
	if a != nil {
		exec = a.exec.id
	}
	reason = fitReason(reason, d.sched.maxSize)
	d.mu.Unlock()
	if stopped {
		return ErrDriverStopped
	}
	if a == nil {
		return fmt.Errorf("%w: task %d", ErrTaskNotRunning, taskID)
	}
	return d.ref.Send(&messages.KillTask{TaskId: taskID, ExecutorId: exec, InterruptThread: true, Reason: reason})
}
