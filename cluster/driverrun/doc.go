// Package driverrun holds what every cluster manager does with a driver:
// it runs the application on a goroutine labelled "Driver"
// (DriverGoroutineLabel), with a panic turned into an error and, where the
// master asks for it, a bound on the time the application takes to bring
// its driver up (spark.yarn.am.waitTime); it applies the one readiness rule
// (spark.scheduler.minRegisteredResourcesRatio of the
// expected executors within spark.scheduler.maxRegisteredResourcesWaitingTime);
// it starts the driver's web UI; and it counts task progress and draws it
// on a terminal.
//
// # Web UI and tracking URL
//
// Every driver the runners start (local, local-cluster, client and cluster
// mode) serves package webui's driver UI while the application runs, as
// spark.ui.enabled (true), spark.ui.port (4040) and spark.port.maxRetries
// (16) say, bound where the driver's env binds; a UI that cannot start is
// logged and the application runs without it. Its URL is the application's
// tracking URL: local[N] prints "tracking URL: URL"; on a resource manager
// the application master registers it (client mode: from
// spark.driver.appUIAddress), and AppReport.TrackingURL carries it.
//
// # Dynamic allocation
//
// With spark.dynamicAllocation.enabled, a driver whose executors come from
// a cluster manager (local-cluster, rm://, k8s://) runs an
// endpoints.ExecutorAllocationManager from the readiness rule until the
// application returns: it asks the cluster manager for executors as the
// backlog lasts and releases idle ones (see package endpoints), and the
// UI's executors page shows its decisions. On local[N] the key is ignored
// with a warning; a dynamic allocation key that does not parse fails the
// application as its driver starts.
//
// # Event log
//
// With spark.eventLog.enabled, Run writes the application's event log
// (package eventlog) on every path that runs a driver (local[N],
// local-cluster, rm:// and k8s://, client and cluster mode): the
// eventlog.Writer is created before the driver and is one of its
// listeners, so it receives every event. As the driver starts, once the
// application's id is known (Spec.AppID, else Launch.AppID from the
// backend), the log is created and ApplicationStart (id, name, user,
// version, the driver's host:port) and EnvironmentUpdate (the
// configuration redacted as the UI redacts it, and the runtime) are
// posted; when the application returns, ApplicationEnd with its error is
// posted before the driver stops, and the log is closed (at most 10s)
// after. A spark.eventLog.* key that does not parse, a folder that does
// not exist or a log of the application already there (without
// spark.eventLog.overwrite) fails the application as its driver starts,
// as Spark's SparkContext does: whoever asked for a log learns at once
// that there will be none.
//
// # Files
//
//	run.go       running the application; the readiness rule
//	runner.go    Run and Backend
//	ui.go        the driver's web UI and its tracking URL
//	dynalloc.go  the driver's dynamic allocation
//	eventlog.go  the event log and the application's own events
//	progress.go  task progress: counts and the console progress bar
package driverrun
