package endpoints

// This file holds the driver's link to its cluster manager: the ClusterManager
// and ExecutorAllocator interfaces and the requests that go through them.

import (
	"context"
	"fmt"
	"reflect"
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

// ExecutorAllocator is told by the driver about executors it lost, so that a
// cluster manager can replace them (YARN's allocator). It hears of them
// through the driver's listener bus: its methods are called on the bus's
// goroutine, in order with the events the listeners get.
type ExecutorAllocator interface {
	// ExecutorLost is called once for every executor the driver removed,
	// with the loss reason (the ExecutorRemoved event).
	ExecutorLost(executorID, reason string)
}

// WithExecutorAllocator sets the allocator the driver tells about lost
// executors. Given the cluster manager of WithClusterManager, it is told
// once.
func WithExecutorAllocator(a ExecutorAllocator) DriverOption {
	return driverOptionFunc(func(o *driverOptions) { o.allocator = a })
}

// lossListener is how an ExecutorAllocator hears of lost executors: a
// listener of the driver's bus that passes the ExecutorRemoved events on.
type lossListener struct{ a ExecutorAllocator }

// OnEvent implements Listener.
func (l lossListener) OnEvent(ev Event) {
	if e, ok := ev.(ExecutorRemoved); ok {
		l.a.ExecutorLost(e.ExecutorID, e.Reason)
	}
}

// allocators returns the allocators the driver tells about lost executors:
// the one of WithExecutorAllocator, and the cluster manager if it is an
// ExecutorAllocator too, unless it is that same allocator.
func (o *driverOptions) allocators() []ExecutorAllocator {
	var out []ExecutorAllocator
	if o.allocator != nil {
		out = append(out, o.allocator)
	}
	if a, ok := o.cm.(ExecutorAllocator); ok && !sameAllocator(a, o.allocator) {
		out = append(out, a)
	}
	return out
}

// sameAllocator reports whether a and b are the same allocator value. Only
// values whose dynamic types can be compared are (==, which would panic on
// a struct holding a map, say); an allocator of an uncomparable type is
// never the same as another, so one given both as the cluster manager and
// with WithExecutorAllocator is told twice.
func sameAllocator(a, b ExecutorAllocator) bool {
	if a == nil || b == nil {
		return false
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Type() == vb.Type() && va.Comparable() && vb.Comparable() && a == b
}
