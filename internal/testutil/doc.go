// Package testutil holds helpers shared by sparkrpc's tests: waits bounded
// by a deadline, contexts bound to a test, gates that hold work back until a
// test lets it go, memory and metrics readings. It is internal: nothing in
// it is a promise to users.
//
// A package's tests, internal ones included, may import testutil; testutil
// imports none of sparkrpc's packages, so no import cycle can arise.
//
// # Files
//
//   - eventually.go: Eventually and EventuallyNoError, a wait for a
//     condition, polled until a deadline.
//   - recv.go: Recv, a receive from a channel, bounded by a deadline.
//   - context.go: Context, a context that ends with the test or at a
//     deadline.
//   - gate.go: Gate, a one-shot signal that also tells when the work it
//     holds back has reached it, and Gates, gates found by key.
//   - allocations.go: AllocatedBytes and LiveHeap, memory as the runtime
//     counts it.
//   - race.go, norace.go: RaceEnabled, whether the race detector is on.
//   - cachelines.go: checks of a type's layout against cache lines.
//   - clock.go: Clock, a clock that moves only when a test moves it.
//   - scrape.go: Scrape and Metrics, a /metrics handler read as Prometheus
//     reads it.
//   - syncbuffer.go: SyncBuffer, an output sink safe for concurrent use.
//   - gobuild.go: GoBuild, a program built for a test to run.
package testutil
