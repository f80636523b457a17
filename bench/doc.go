// Package bench is sparkrpc's throughput harness: it measures sparkrpc's
// message throughput and latency and, in the same process and run, the same
// workloads on the baselines, so that every figure comes with a ratio that
// holds on a shared, noisy machine where absolute numbers drift.
//
// # Scenarios
//
// Each scenario (see Scenarios) has one or more variants (payload size, asks
// in flight, senders, endpoints). Every variant is measured for sparkrpc and
// for each of its baselines: a warm-up run, then a measured run of a fixed
// message count (Config.Count) or duration (Config.Duration).
//
//   - local-send: one-way sends to one endpoint of an env, from 1 sender and
//     from N senders (fan-in). Baseline: raw protoactor-go Send to an actor.
//   - local-ask: asks to one endpoint, 1 and K in flight. Baseline: raw
//     protoactor-go RequestFuture.
//   - loop: L senders to L endpoints, on the env's shared loop and on
//     dedicated loops (actor.Isolated). Baseline: raw protoactor-go.
//   - many-endpoints: 10,000 endpoints in ping-pong pairs, all at once.
//   - remote-send and remote-ask: two envs in this process over loopback TCP
//     (package netty), per payload size, asks with 1 and K in flight.
//     Baselines: protoactor-go's gRPC remote between two actor systems, and
//     a raw length-prefixed TCP stream of the same messages (the ceiling).
//     Both also run tcp-delivered: the same stream, each frame decoded into
//     a new message and handled on another goroutine (which writes an ask's
//     reply; a frame of 512 bytes or more is decoded there too), what
//     delivering to an endpoint costs at the least. remote-send also runs
//     sparkrpc-borrowed: sparkrpc to an endpoint that borrows its messages
//     (actor.Borrower), whose large messages alias the receiver's read
//     buffer instead of owning a copy; the ratio it prints is the default
//     path's over it.
//   - remote-fan-in: 32 envs (one sender and one connection each) to one
//     endpoint of another, as executors' status updates reach a driver.
//     Baselines: 32 protoactor-go remotes to one, and 32 raw TCP streams.
//   - remote-ask-under-flood: asks of 16 bytes, 1 in flight, while one-way
//     messages of each payload size flood another endpoint over the same
//     connection (head-of-line blocking). Baselines: protoactor-go's remote
//     and raw TCP.
//   - executor-registration and empty-tasks: the scheduler backend (package
//     endpoints). Empty tasks run on 4 one-core executors, one task per
//     round trip on each. Baselines: the same round trips as raw TCP frames
//     (a launch out, RUNNING and FINISHED back), the ceiling of such a
//     protocol; and tcp-delivered, the same frames decoded and handed from
//     goroutine to goroutine as the endpoint model does (a reader, the
//     endpoint, the task), its floor.
//   - empty-tasks-eventlog: empty-tasks with the driver writing its event
//     log (package eventlog, the keys' defaults), beside the same driver
//     with a listener that does nothing (sparkrpc-no-eventlog): the cost of
//     the log itself, as every driver the cluster runs has listeners (its
//     progress counter, its UI) and so builds and posts its events anyway.
//   - executor-startup: the time from submit until 10, 50 and 100 executors
//     registered, on Kubernetes next to local-cluster. The harness starts no
//     cluster: the caller gives both with WithStartup (`sparkrpc bench` does,
//     with the local control plane of --kube-bin); a side not given is
//     reported as skipped, and quick runs skip the scenario unless named.
//
// With Config.TLS (`sparkrpc bench --tls`) the four remote scenarios run
// over TLS, sparkrpc and every baseline alike: the harness makes a
// self-signed ECDSA P-256 certificate for 127.0.0.1 at the start of the run
// (its files in a temporary folder removed at the end), which every side
// presents and trusts (mutual TLS). sparkrpc's envs get it through the
// spark.ssl.rpc.* keys, the raw TCP baseline wraps its connections with
// crypto/tls, and protoactor-go's remote takes gRPC's TLS credentials.
// Handshakes finish before measuring, given a warm-up (protoactor's remote
// connects lazily). The report records the version and cipher suite that
// the bench's own handshake with its configuration negotiated (Report.TLS);
// the other scenarios ignore the option.
//
// "K in flight" means K asking goroutines, each with one ask outstanding;
// one-way senders are held to a window of messages in flight (Config.Window)
// so that a fast sender cannot queue without bound. The counts behind the
// window are on cache lines of their own, and a sender reads the arrivals
// only when the window may be full, so that the harness's bookkeeping moves
// no cache line between a sender's and a receiver's processors at every
// message, for any implementation.
//
// # Verification
//
// Every message is a messages.BenchPing carrying its sender's index and a
// sequence number. Receivers check that each number arrives exactly once and,
// since every scenario has one sender per (sender, endpoint) stream, in
// order; askers check that each reply echoes its request. A lost, duplicated
// or reordered message fails the run (Run returns ErrVerificationFailed with
// the report), for sparkrpc and baselines alike.
//
// # Figures
//
// Per implementation: messages per second, payload MB per second, ask
// latency percentiles (p50, p99, p99.9 from an HDR histogram), and heap
// allocations and bytes per message (runtime.MemStats deltas over the
// measured run, whole process). Per variant: sparkrpc's ratio to each
// baseline (messages per second, and p50/p99 latency for asks) and the design
// targets that apply, met or not. Per run, on Linux: the share of the
// machine's CPU time that its hypervisor gave to other guests meanwhile
// (Report.StolenCPU, steal time), which widens the spread between runs on a
// virtual machine with shared CPUs, and the process's scheduling class when
// it is not the default (Machine.Scheduling): ratios from a real-time class
// differ from the default's.
//
// # Usage
//
//	cfg := bench.DefaultConfig()
//	cfg.Scenarios = []string{bench.ScenarioRemoteAsk}
//	rep, err := bench.Run(ctx, cfg, bench.WithProgress(show))
//	rep.WriteTable(os.Stdout)
//	rep.WriteJSONFile("out.json")
//
// Reports read back with ReadJSONFile and compare with WriteComparison. The
// `sparkrpc bench` command wraps all of this; `go test -bench .` in this
// package runs the same scenarios as micro benchmarks for benchstat.
//
// Under the race detector the protoactor-go remote baseline is skipped: its
// remote.Start sets gRPC's global logger on every start while earlier
// servers read it, a race in protoactor-go itself.
package bench
