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
// # Files
//
//	run.go       running the application; the readiness rule
//	ui.go        the driver's web UI and its tracking URL
//	progress.go  task progress: counts and the console progress bar
package driverrun
