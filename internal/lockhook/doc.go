// Package lockhook has a mutex whose release calls a hook: the seam with
// which netty's transport and the scheduler backend's driver let a caller
// (a deterministic simulator) act at the points where the goroutines that
// share their lock interleave.
package lockhook
