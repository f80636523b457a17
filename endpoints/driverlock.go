// The driver's lock, and the hook on its release.

package endpoints

import "sync"

// driverLock is the driver's lock (Driver.mu). The driver's endpoint, a
// job's caller cancelling it and the goroutines that learn why an executor
// was lost all take it, so its releases are where those goroutines'
// interleaving is decided. When the driver was given a function with
// WithLockRelease, Unlock calls it once the lock is free.
type driverLock struct {
	sync.Mutex
	released func()
}

// Unlock releases the lock, then calls the release hook, if any.
func (l *driverLock) Unlock() {
	l.Mutex.Unlock()
	if l.released != nil {
		l.released()
	}
}

// WithLockRelease sets a function that the driver calls each time it has
// released its lock, on the goroutine that released it. Every scheduling
// step (a status update, an executor's registration or loss, a job's
// submission or cancel) runs under that lock, so its releases are the
// points at which another goroutine may step in between two steps of the
// one that released it. A deterministic simulator makes them scheduling
// points of its own (it yields there when its seed says), to explore how a
// job's cancel and a status update's scheduling step interleave. release
// must not block and must not call the driver. The default (nil) costs one
// comparison per release.
func WithLockRelease(release func()) DriverOption {
	return driverOptionFunc(func(o *driverOptions) { o.lockRelease = release })
}
