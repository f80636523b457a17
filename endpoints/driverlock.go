// The driver's hook on the release of its lock.

package endpoints

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
