package endpoints

import (
	"context"
	"fmt"
	"slices"

	"github.com/sparkrpc/sparkrpc/messages"
)

// ReasonPendingLoss is the reason of the tasks a driver with a cluster
// manager re-runs when an executor's connection closes, while it asks the
// cluster manager why the executor went away.
const ReasonPendingLoss = "Pending loss reason."

// ClusterManager is the driver's link to the cluster manager that runs its
// executors (Spark's ExecutorAllocationClient as the YARN scheduler backend
// implements it, through the application master). Set it with
// WithClusterManager. The driver calls it from the goroutine of the
// Driver method that needs it, or from a goroutine of its own; never from
// its endpoint's loop. ctx bounds each call.
type ClusterManager interface {
	// RequestTotalExecutors asks for total executors in all, counting the
	// running ones (Spark's doRequestTotalExecutors).
	RequestTotalExecutors(ctx context.Context, total int) error
	// KillExecutors releases the executors ids (Spark's doKillExecutors)
	// and does not replace them: the number of executors wanted drops by
	// as many. The driver has already removed them.
	KillExecutors(ctx context.Context, ids []string) error
	// KillAndReplaceExecutors kills the executors ids (their whole
	// containers) and starts as many others in their place: the number of
	// executors wanted stays the same (Spark's killAndReplaceExecutor). The
	// driver asks it for an executor it stopped hearing from (heartbeats
	// missed for spark.network.timeout), or whose connection closed while
	// its container kept running; it has removed the executor, or is
	// removing it, and runs its tasks elsewhere.
	KillAndReplaceExecutors(ctx context.Context, ids []string) error
	// ExecutorLossReason returns why executor id went away (Spark's
	// GetExecutorLossReason), e.g. the exit status of its container. It is
	// asked when the executor's connection closed; an error or an empty
	// reason leaves ReasonDisassociated.
	ExecutorLossReason(ctx context.Context, id string) (string, error)
}

// WithClusterManager sets the driver's cluster manager: Driver.
// RequestTotalExecutors and Driver.KillExecutors go through it, and an
// executor whose connection closes is removed with the loss reason it gives.
// Until that reason arrives the executor gets no task, and its running tasks
// run elsewhere at once (Spark's disableExecutor); if the cluster manager
// cannot give a reason (its container still runs, say), the executor is
// killed and replaced. An executor silent for longer than the heartbeat
// timeout is removed and killed and replaced through it too (Spark's
// HeartbeatReceiver). If cm also implements ExecutorAllocator, it is told
// about lost executors as with WithExecutorAllocator.
func WithClusterManager(cm ClusterManager) DriverOption {
	return driverOptionFunc(func(o *driverOptions) { o.cm = cm })
}

// ClusterManager returns the driver's cluster manager, or nil.
func (d *Driver) ClusterManager() ClusterManager { return d.cm }

// RequestTotalExecutors asks the cluster manager for total executors in
// all, the running ones included. It returns ErrNoClusterManager without
// WithClusterManager, ErrDriverStopped once the driver is stopping, and the
// cluster manager's error otherwise.
func (d *Driver) RequestTotalExecutors(ctx context.Context, total int) error {
	if total < 0 {
		return fmt.Errorf("%w: requesting %d executors", ErrInvalidConfig, total)
	}
	if d.cm == nil {
		return ErrNoClusterManager
	}
	if d.isStopped() {
		return ErrDriverStopped
	}
	d.log.Info().Int("total", total).Msg("Requesting executors from the cluster manager")
	if err := d.cm.RequestTotalExecutors(ctx, total); err != nil {
		return fmt.Errorf("requesting %d executors: %w", total, err)
	}
	return nil
}

// KillExecutors removes the registered executors among ids from the driver
// with the reason ReasonKilled ("Executor killed by driver."): each is told
// to stop and its tasks run elsewhere. Then, with a cluster manager, it asks
// the cluster manager to release them. It returns the ids it killed, in the
// order given; unknown ids are skipped, as in Spark. Without a cluster
// manager the executors are only removed (they exit on StopExecutor).
func (d *Driver) KillExecutors(ctx context.Context, ids []string) ([]string, error) {
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
	for _, id := range known {
		if _, err := d.ref.AskSync(ctx, &messages.RemoveExecutor{ExecutorId: id, Reason: ReasonKilled}); err != nil {
			return nil, fmt.Errorf("killing executor %s: %w", id, err)
		}
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
	d.mu.Unlock()
	if stopped {
		return ErrDriverStopped
	}
	if a == nil {
		return fmt.Errorf("%w: task %d", ErrTaskNotRunning, taskID)
	}
	return d.ref.Send(&messages.KillTask{TaskId: taskID, ExecutorId: exec, InterruptThread: true, Reason: reason})
}

func (d *Driver) isStopped() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stopped
}

// disableExecutor is what a driver with a cluster manager does when an
// executor's connection closes (Spark's disableExecutor): the executor gets
// no more tasks, its running tasks run elsewhere, and the cluster manager is
// asked why it went away; the executor is removed with that reason.
func (d *Driver) disableExecutor(id string) {
	var out offerResult
	d.mu.Lock()
	if d.stopped {
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
	d.sched.executorLost(ex, ReasonPendingLoss, &out)
	d.makeOffers(nil, &out)
	d.publish(&out)
	d.bg.Add(1) // under d.mu: Stop sets d.stopped under it before it waits
	d.mu.Unlock()
	d.log.Warn().Str("executor", id).Msg("Executor disconnected; asking the cluster manager why")
	d.sendLaunches(out.launches)
	d.sendKills(out.kills)
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
		_ = d.ref.Send(&messages.RemoveExecutor{ExecutorId: id, Reason: reason})
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

// sameValue reports whether a and b are the same comparable value.
func sameValue(a, b any) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
