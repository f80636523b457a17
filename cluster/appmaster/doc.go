// Package appmaster is the application master of sparkrpc's YARN-shaped
// cluster (Spark's ApplicationMaster and YarnAllocator): in cluster mode it
// runs the application as the driver; in client mode (ExecutorLauncher) the
// driver runs in the submitting process and the AM only allocates its
// executors. SchedulerBackend is the driver's side of the link (Spark's
// YarnSchedulerBackend), in both modes.
//
// The application master (endpoint "YarnAM") registers with the resource
// manager once the driver is up (cluster mode) or reachable (client mode),
// keeps the executors at their target number, replaces failed ones up to
// spark.executor.maxNumFailures, answers the driver's questions about lost
// executors, kills executors on the driver's request (replacing them when
// the driver asks it to kill and replace one whose heartbeats expired: a
// killed container is not counted as a failure), and unregisters with the
// final status. Its failures use Spark's
// exit codes (13: no SparkContext in time, 15: the application failed or is
// unknown, 11: too many executor failures).
//
// # Files
//
//	appmaster.go  Config and Run: the AM's entry point, settings and exit
//	driver.go     cluster mode: the driver in the AM
//	launcher.go   client mode: the AM as ExecutorLauncher
//	endpoint.go   the AM's endpoint, which the driver asks (Spark's AMEndpoint)
//	allocator.go  the allocator: executors at their target, failures counted
//	backend.go    SchedulerBackend, the driver's link to the AM
package appmaster
