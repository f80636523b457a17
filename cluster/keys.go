// The configuration keys of the cluster managers, with Spark's names where Spark has them.

package cluster

// Configuration keys read by the submit client, the application master and
// its allocator, with Spark's names.
const (
	// KeyNumExecutors is the number of executors (--num-executors; default 2,
	// on local-cluster as many as fit).
	KeyNumExecutors = "spark.executor.instances"
	// KeyExecutorMemory is each executor's container memory (--executor-memory; default 1g).
	KeyExecutorMemory = "spark.executor.memory"
	// KeyExecutorCores is each executor's cores (--executor-cores; default 1).
	KeyExecutorCores = "spark.executor.cores"
	// KeyDriverMemory is the driver's memory: the AM container in cluster
	// mode (--driver-memory; default 1g).
	KeyDriverMemory = "spark.driver.memory"
	// KeyDriverCores is the AM container's cores in cluster mode (default 1).
	KeyDriverCores = "spark.driver.cores"
	// KeyAMMemory is the AM container's memory in client mode (default 512m).
	KeyAMMemory = "spark.yarn.am.memory"
	// KeyAMCores is the AM container's cores in client mode (default 1).
	KeyAMCores = "spark.yarn.am.cores"
	// KeyHistoryServerAddress is the history server's address
	// ("host:18080"; a URL with its scheme is taken as it is): once an
	// application on a resource manager has ended, its tracking URL is its
	// page there, ADDRESS/history/APP_ID/ (unset: none).
	KeyHistoryServerAddress = "spark.yarn.historyServer.address"
	// KeyAMWaitTime is how long the AM waits for the application to bring
	// up its driver (default 100s).
	KeyAMWaitTime = "spark.yarn.am.waitTime"
	// KeyMaxExecutorFailures is how many executor failures fail the
	// application (default max(3, 2 × executors); with dynamic allocation
	// 2 × spark.dynamicAllocation.maxExecutors, as in Spark).
	KeyMaxExecutorFailures = "spark.executor.maxNumFailures"
	// KeyHeartbeatIntervalMs is the AM's heartbeat interval to the resource
	// manager (default 1000 ms here; Spark's is 3s).
	KeyHeartbeatIntervalMs = "spark.yarn.scheduler.heartbeat.interval-ms"
	// KeyInitialAllocInterval is the AM's heartbeat interval while it waits
	// for containers (default 200ms).
	KeyInitialAllocInterval = "spark.yarn.scheduler.initial-allocation.interval"
	// KeyAMAllocateTimeout bounds the wait for the resource manager's
	// answer to one of the AM's allocate heartbeats (default 30s); the
	// next heartbeat asks again, and gets what a lost answer carried.
	KeyAMAllocateTimeout = "spark.sparkrpc.yarn.am.allocateTimeout"
	// KeyQueue is the queue (--queue; default "default").
	KeyQueue = "spark.yarn.queue"
	// KeyAppName is the application's name (--name; default the class).
	KeyAppName = "spark.app.name"
	// KeyAppID is set to the application id.
	KeyAppID = "spark.app.id"
	// KeyMaster is set to the master string.
	KeyMaster = "spark.master"
	// KeyDeployMode is client or cluster (--deploy-mode; default client).
	KeyDeployMode = "spark.submit.deployMode"
	// KeyFiles is the comma-separated list of submit's --files, where a
	// cluster manager passes them on to a driver it starts elsewhere.
	KeyFiles = "spark.files"
	// KeyWaitAppCompletion false makes a cluster-mode submit return once the
	// application is submitted (default true).
	KeyWaitAppCompletion = "spark.yarn.submit.waitAppCompletion"
	// KeyReportInterval is how often submit polls the application's report
	// (default 1s; 200ms on local-cluster).
	KeyReportInterval = "spark.yarn.report.interval"
	// KeyMinRegisteredRatio is the share of the executors that must have
	// registered before AppContext.Driver returns (default 0.8).
	KeyMinRegisteredRatio = "spark.scheduler.minRegisteredResourcesRatio"
	// KeyMaxRegisteredWait bounds that wait (default 30s).
	KeyMaxRegisteredWait = "spark.scheduler.maxRegisteredResourcesWaitingTime"
)

// Configuration keys of the embedded local cluster (not Spark's).
const (
	// KeyLocalClusterDir keeps the local cluster's folder (node logs,
	// staging) at this path instead of a temporary folder removed at exit.
	KeyLocalClusterDir = "spark.sparkrpc.localCluster.dir"
	// KeyNodeExpiry is the embedded resource manager's node expiry.
	KeyNodeExpiry = "spark.sparkrpc.rm.nodeExpiry"
	// KeySubmitWorkingDir is the submitting command's working folder, which
	// applications resolve relative file arguments against.
	KeySubmitWorkingDir = "spark.sparkrpc.submit.workingDir"
	// KeyContainerEnvWhitelist names, comma-separated, the variables of the
	// environment that an embedded local cluster's containers get beside
	// the defaults (nodemanager.Config.EnvWhitelist).
	KeyContainerEnvWhitelist = "spark.sparkrpc.container.envWhitelist"
)

// Configuration keys of the resource manager's staging (not Spark's).
const (
	// KeyStagingMaxAppSize bounds the bytes one application may stage on a
	// resource manager (its program and --files together; default 8g): a
	// chunk past it is refused with an error matching ErrStagingLimit. It
	// is read from the resource manager's conf.
	KeyStagingMaxAppSize = "spark.sparkrpc.yarn.staging.maxAppSize"
)
