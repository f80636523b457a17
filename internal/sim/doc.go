// Package sim is a deterministic simulation of a whole sparkrpc
// application: the driver, executors, heartbeats and tasks of package
// endpoints, and, for a quarter of the seeds, the YARN-shaped cluster that runs
// them (resource manager, node managers, the application master's
// allocator), unchanged, in one process, on a simulated network (or, one
// in ten of the other seeds, on netty's TCP transport over a simulated TCP
// network), with a virtual clock, and faults drawn from a seed. One seed runs the same
// events in the same order every time, so a failure replays exactly, and
// its trace hash tells two runs apart. See docs/testing.md.
//
// # Usage
//
//	go test ./internal/sim -run TestSimulation -args -seeds=1000
//	go test ./internal/sim -run TestSimulation -args -seed=42 -trace
//
// In a test, RunSeed runs one seed and returns its Result.
//
// # Files
//
//   - world.go: the World, its event queue and loop.
//   - network.go: the simulated network, an actor.Transport per env.
//   - tcp.go: the simulated TCP network of netty seeds: hosts (a
//     netty.Network per env), listeners, dials.
//   - tcpconn.go: a TCP connection and its ends (net.Conns).
//   - tcpsegment.go: segments: cut at frames, scheduled, held, delivered.
//   - tcpfaults.go: what the faults do to TCP connections.
//   - tcprace.go: the half-open race of a replaced connection.
//   - nettyapp.go: netty seeds: the envs on netty, watched, and the chatty
//     clients.
//   - nettycheck.go: what netty seeds check: per-sender order, no zombie
//     peer.
//   - app.go: the application: driver, executors, jobs.
//   - yarn.go: the YARN-shaped cluster: managers, submission, node loss.
//   - containers.go: the node managers' Launcher: containers' programs.
//   - yarnconfig.go: what a seed draws for its cluster.
//   - yarninvariants.go: what the allocator and managers must hold to.
//   - task.go: the task function the jobs run.
//   - config.go: what a seed draws before the run.
//   - faults.go: the fault kinds and how they are applied.
//   - invariants.go: what must hold after every step and at the end.
//   - trace.go: the trace and its hash.
//   - stats.go: counts for the summary table.
//   - run.go: RunSeed.
package sim
