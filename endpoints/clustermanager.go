package endpoints

// This file holds the driver's link to its cluster manager: the ClusterManager
// and ExecutorAllocator interfaces and the requests that go through them.

import (
	"context"
	"fmt"
)

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

// sameValue reports whether a and b are the same comparable value.
func sameValue(a, b any) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// ExecutorAllocator is told by the driver about executors it lost, so that a
// cluster manager can replace them (YARN's allocator). Its methods are called
// on the listener bus goroutine, in order with the other events.
type ExecutorAllocator interface {
	// ExecutorLost is called once for every executor the driver removed,
	// with the loss reason.
	ExecutorLost(executorID, reason string)
}

// WithExecutorAllocator sets the allocator the driver tells about lost
// executors.
func WithExecutorAllocator(a ExecutorAllocator) DriverOption {
	return driverOptionFunc(func(o *driverOptions) { o.allocator = a })
}
