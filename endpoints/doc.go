// Package endpoints is what Spark builds on its RPC layer: the driver's
// scheduler endpoint (CoarseGrainedScheduler), the executors' backend
// endpoint (Executor), the driver's HeartbeatReceiver, a small FIFO task
// scheduler, a listener bus, and the registry of task functions.
//
// # Tasks
//
// Go cannot send closures to another process, so a task names a function
// registered with RegisterTask in every process of the application (they are
// built from the same program), the way database/sql drivers register
// themselves. A task's payload and result are bytes:
//
//	func init() {
//		endpoints.RegisterTask("wordcount.count", func(ctx context.Context, tc endpoints.TaskContext, p []byte) ([]byte, error) {
//			...
//		})
//	}
//
// # The driver
//
// NewDriver registers the driver's endpoints on a listening env (from package
// netty in a program, or an actor.MemNetwork in tests). Executors are started
// with its URL ("spark://CoarseGrainedScheduler@host:port"). Then
//
//	results, err := driver.RunJob(ctx, "wordcount.count", payloads)
//
// runs one task per payload on the executors and returns the results in
// partition order. The scheduler keeps jobs in FIFO order and offers tasks to
// free cores round-robin across executors whenever something changes (a job
// is submitted, an executor becomes ready, a task ends) and every
// spark.scheduler.revive.interval (1s); a job that has launched no task says
// so in the driver's log every spark.starvation.timeout (15s), as Spark's
// "Initial job has not accepted any resources". A task that fails (an error or a panic)
// runs again, up to spark.task.maxFailures (4) attempts; the job then fails
// with a *JobAbortedError carrying the last error. A task whose LaunchTask
// message reaches spark.rpc.message.maxSize aborts its job (ErrTaskTooLarge),
// and a result whose StatusUpdate would reach it fails its attempt (which
// runs again, as any failure); the check keeps 256 bytes of the limit for
// the transport's envelope. A job whose results add up to more than
// spark.driver.maxResultSize (1g; 0: no limit) is aborted
// (ErrResultTooLarge), as Spark aborts such an action. An executor logs what it cannot send (a status
// update, say) to its logger, which is silent unless RunExecutor is given one
// with WithLogger (LocalClusterConfig.ExecutorOptions for StartLocalCluster).
// Each partition's result is taken once: a late or duplicate result (from an
// attempt of a lost executor, say) is ignored. Cancelling RunJob's context
// kills the job's running tasks.
//
// Executor loss — its connection closes, its heartbeats stop for
// spark.network.timeout (checked every spark.network.timeoutInterval), or
// RemoveExecutor / KillExecutor — removes the executor, tells it to stop,
// and runs its tasks elsewhere. Driver.Stop stops every executor
// (StopExecutors), then the driver (StopDriver); a task attempt still
// running then (one of an aborted job whose kill was not answered yet) ends
// for the listeners as KILLED, "Driver stopped", so that every TaskStart
// has its TaskEnd.
//
// Driver.KillTask kills one running task (it runs again);
// Driver.KillExecutor and Driver.KillExecutors remove executors with the
// reason "Executor killed by driver."; Driver.KillExecutorsOnHost removes
// those of one host so, and has a cluster manager replace them (Spark's
// KillExecutorsOnHost). The driver endpoint answers IsExecutorAlive.
//
// # Cluster managers
//
// A driver whose executors come from a cluster manager (YARN's application
// master, say) is given a ClusterManager with WithClusterManager, Spark's
// ExecutorAllocationClient: Driver.RequestTotalExecutors asks it for a
// number of executors, and Driver.KillExecutors removes executors from the
// driver, then asks it to release them. When an executor's connection
// closes, such a driver stops offering it tasks and runs its tasks elsewhere
// at once, asks the cluster manager why the executor went away
// (ExecutorLossReason: its container's exit status, say), and removes it
// with that reason; if it cannot give one (the container still runs, say),
// the executor is killed and replaced. An executor that misses heartbeats
// for spark.network.timeout is removed and, as Spark's HeartbeatReceiver
// does, killed and replaced through KillAndReplaceExecutors: a hung
// process neither stalls a job nor keeps its container's resources. An
// ExecutorAllocator (WithExecutorAllocator, or a
// ClusterManager that implements it too) is told about every executor the
// driver removed, through the listener bus.
//
// The driver publishes typed events (ExecutorAdded, ExecutorRemoved,
// TaskStart, TaskEnd, JobStart, JobEnd) on its listener bus: listeners
// (AddListener, WithListener, NewLogListener) get them in order on the bus's
// own goroutine, so that a slow listener never holds up the driver. As in
// Spark, the bus holds at most spark.scheduler.listenerbus.eventqueue.capacity
// (10000) events not yet delivered; events posted past that are dropped and
// counted (Driver.DroppedEvents). The first drop is logged at error level at
// once, later ones in one warning a minute at most with the number dropped
// since the previous report, and any not yet reported when the driver stops.
// As in Spark, a job's JobEnd is posted before RunJob returns (delivering
// it is the bus's business).
//
// # Dynamic allocation
//
// An ExecutorAllocationManager (NewExecutorAllocationManager, with the
// AllocationConfig of ParseAllocationConfig) is Spark's dynamic allocation
// for a driver with a cluster manager; the cluster's runners start one when
// spark.dynamicAllocation.enabled is true. Every 100 ms it looks at the
// task backlog (tasks waiting for a core) and at how long each executor
// has run no task, and decides, in an I/O-free core:
//
//   - when tasks have waited spark.dynamicAllocation.schedulerBacklogTimeout
//     (1s), it raises the target by 1, then by 2, 4, ... more every
//     spark.dynamicAllocation.sustainedSchedulerBacklogTimeout (default the
//     backlog timeout) while the backlog lasts, bounded by what the tasks
//     need (one core per waiting or running task, times
//     spark.dynamicAllocation.executorAllocationRatio (1), over
//     spark.executor.cores / spark.task.cpus) and by
//     spark.dynamicAllocation.maxExecutors (no bound);
//   - when the tasks need fewer executors than the target, it lowers the
//     target (never below spark.dynamicAllocation.minExecutors, 0); the
//     cluster managers stop starting executors but stop none that runs;
//   - it releases executors that have run no task for
//     spark.dynamicAllocation.executorIdleTimeout (60s), as
//     Driver.KillExecutors would (which the application itself may not
//     call while the manager runs, see below), keeping minExecutors and
//     the target.
//
// The target starts at spark.dynamicAllocation.initialExecutors (default
// minExecutors), raised, with a warning, to spark.executor.instances when
// that is set and larger (InitialExecutors; cluster.Submit applies it, so
// every cluster manager starts that many), and is not lowered before a
// backlog is seen or an executor idles out. The target is asked for with
// Driver.RequestTotalExecutors: at start, whenever it changes, and after
// each release (a release lowers the cluster manager's count).
//
// Spark keeps an executor that holds shuffle files or cached blocks
// (spark.shuffle.service.enabled or
// spark.dynamicAllocation.shuffleTracking.enabled must be on): sparkrpc's
// tasks return their results to the driver and leave nothing behind on
// the executor, so an idle executor has nothing to lose and is released
// once idle past the timeout, with no such key. An executor that took a
// task after it was seen idle is not released (Spark's force = false): its
// idleness is checked again under the lock its removal holds.
// While a manager runs, Driver.KillExecutors returns ErrDynamicAllocation
// (as Spark's killExecutors): the manager owns the cluster manager's
// target, which the kill would lower behind its back.
//
// Each decision is logged at info level with its numbers (decision,
// target, previous_target, backlog, running, executors, idle) and kept
// (the last 100, ExecutorAllocationManager.Status) for the driver's UI.
//
// # The executor and the handshake
//
// RunExecutor is an executor process without os.Exit. The handshake follows
// Spark 3+:
//
//  1. A client-mode env, the config fetcher, looks up the driver URL (3
//     tries) and asks RetrieveSparkAppConfig; the reply's SparkAppConfig holds
//     the driver's properties. The executor's conf is made of them (its own
//     values win only for startup keys: spark.rpc.*, spark.network.*,
//     spark.auth*, spark.ssl.*, ports), plus spark.executor.id and
//     spark.app.id. The fetcher shuts down.
//  2. The executor starts its own client-mode env and registers the Executor
//     endpoint, a serial endpoint with its own loop.
//  3. In OnStart it looks the driver up and asks RegisterExecutor (id, its
//     own ref, host, cores, log URLs, attributes, resource profile).
//  4. The driver refuses a duplicate id ("Duplicate executor ID: ID") or an
//     excluded host ("Executor is excluded due to failures: ID"); otherwise it
//     records the executor with its cores but 0 free cores, posts
//     ExecutorAdded (with its log URLs and attributes), and replies true.
//     With spark.ui.custom.executor.log.url set, the log URLs recorded are
//     built from that pattern and the executor's attributes, as Spark's
//     ExecutorLogUrlHandler does (ExecutorLogURLs).
//  5. On success the executor sends itself RegisteredExecutor, creates its
//     task runner (one goroutine per core) and heartbeater, and sends
//     LaunchedExecutor. On failure RunExecutor returns an *ExitError with code
//     1 and the reason.
//  6. On LaunchedExecutor the driver gives the executor its free cores and
//     offers it tasks: no task reaches an executor before it is ready.
//
// An executor runs each LaunchTask on its runner, off the endpoint's loop, and
// reports RUNNING, then FINISHED with the result, FAILED with the error (a
// panic is a failed task with the panic's text, never a dead executor) or
// KILLED. It heartbeats the driver every spark.executor.heartbeatInterval
// (10s). StopExecutor makes it shut down; the shutdown runs off the loop, so
// the endpoint never waits for its own env. If the driver's connection
// closes, RunExecutor returns an *ExitError with code 1 and "Driver ADDR
// disassociated! Shutting down.". Cancelling RunExecutor's context stops it
// gracefully: the driver sends it no more tasks, the running ones finish, the
// driver is told, and RunExecutor returns nil.
//
// StartLocalCluster puts a driver and N executors in one process (local
// masters, tests and benchmarks); the envs of its executors come from an
// EnvFactory such as MemEnvFactory or one built on package netty.
//
// # Handlers
//
// The three endpoints (CoarseGrainedScheduler, HeartbeatReceiver, Executor)
// are built on actor.Router: each embeds a Router, registers one typed
// handler per message when it is created, and keeps its lifecycle hooks
// (OnStart, OnStop, OnDisconnected, OnError, ThreadCount) as methods of its
// own. A message of a type without a handler fails its asker with
// "Unsupported message". The driver endpoint, for example:
//
//	e := &driverEndpoint{Router: actor.NewRouter(), d: d}
//	actor.Handle(e.Router, func(ctx *actor.Context, m *messages.StatusUpdate) error {
//		d.statusUpdate(m, ctx.Peer()) // the env it came from (actor.PeerAware)
//		return nil
//	})
//	actor.HandleAsk(e.Router, d.register) // *RegisterExecutor -> *BoolReply
//
// # Files
//
// Each file holds one concept:
//
//   - driver.go: the Driver type, NewDriver and Stop;
//     driverendpoint.go: the CoarseGrainedScheduler endpoint's handlers;
//     driverlock.go: WithLockRelease, the hook on the release of the
//     driver's lock;
//   - registration.go: RegisterExecutor, LaunchedExecutor and the driver's
//     record of its executors (ExecutorInfo, Executors, WaitForExecutors);
//     logurlpattern.go: spark.ui.custom.executor.log.url;
//   - jobs.go: RunJob, job cancellation, KillTask; offers.go: resource
//     offers, status updates, launches and kills; scheduler.go: the
//     I/O-free FIFO task scheduler;
//   - executorloss.go: RemoveExecutor, KillExecutor(s), the loss reasons,
//     disabling and replacing executors; clustermanager.go: the
//     ClusterManager and ExecutorAllocator interfaces;
//   - allocationconf.go: dynamic allocation's keys, AllocationConfig and
//     InitialExecutors; allocationplan.go: its I/O-free decision core;
//     allocationmanager.go: the ExecutorAllocationManager's loop and
//     Status;
//   - heartbeat.go: the HeartbeatReceiver and the executor's heartbeats;
//   - executor.go: ExecutorConfig, RunExecutor and the config fetch;
//     executorbackend.go: the Executor endpoint; executorstop.go: how an
//     executor stops, decommissions or exits; taskrunner.go: its task
//     goroutines;
//   - events.go: the events and Listener; listenerbus.go: their delivery;
//   - local.go: LocalCluster; registry.go: task functions; options.go:
//     options and configuration keys; errors.go: errors.
package endpoints
