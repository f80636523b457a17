// Package cluster is the job-submission path of sparkrpc: a resource
// manager, node managers that run containers as child processes, an
// application master that runs the driver and allocates executors, and the
// client that submits an application and watches it. It follows Spark on
// YARN (Client, ApplicationMaster, YarnAllocator, ExecutorRunnable) on top
// of the actor, netty and endpoints packages.
//
// # Applications
//
// An application is a Go function registered by name with RegisterApp,
// usually from an init function; the name is submit's --class. It brings up
// its driver with AppContext.Driver, runs jobs of registered task functions
// (see package endpoints), and writes its results to AppContext.Stdout.
//
// # Masters
//
// ParseMaster understands local[N] (driver and one executor in this
// process), local-cluster[W,C,M] (a resource manager and W node managers
// with C cores and M MiB each embedded in this process, plus a node of the
// AM's size reserved for the application master, so that each worker runs
// one executor with its C cores, as in Spark; the AM/driver and executors
// are child processes of the same binary) and rm://host:port (a running
// resource manager). Submit runs an application on any of them.
//
// # Networks
//
// The cluster's processes create their envs through a Network: TCPNetwork
// (netty's TCP transport) by default. SubmitConfig.Network and
// AMConfig.Network accept another implementation, such as one over
// actor.MemNetwork when every env is in one process.
//
// # The resource-manager protocol
//
// The resource manager (endpoint "ResourceManager") hands out application
// ids application_<clusterTimestamp>_<seq>, moves applications through
// NEW → SUBMITTED → ACCEPTED → RUNNING → FINISHED | FAILED | KILLED with a
// final status, places containers without ever oversubscribing a node's
// memory or cores, and fails the containers of nodes that miss heartbeats.
// Each application gets a staging folder (0700) holding its configuration
// without its secret, removed when it ends or its submission fails.
//
// A node manager registers with the resource manager, retrying with
// exponential backoff and jitter (each attempt logged) for up to
// NodeManagerConfig.RegisterTimeout, and gives up with
// ErrRegistrationFailed then or as soon as its ctx ends. Submitting to a
// resource manager without node managers fails with ErrNoNodeManagers.
//
// In client mode the driver runs in the submitting process: it reports its
// task progress to the resource manager itself (RmTaskProgress), so that
// the application's report shows it as in cluster mode.
//
// A node manager (endpoint "NodeManager") starts each container as a child
// process in its own process group, with GOMEMLIMIT from the container's
// memory and stdout/stderr in the container's log folder, reports exit
// codes, and stops containers with SIGTERM and then SIGKILL after a grace
// period, on request and when it shuts down. On Linux the kernel also kills
// a container whose node manager dies without stopping it; other Unix
// systems have no parent-death signal. The package needs Unix process
// groups, so it builds on Unix systems only.
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
// # Security
//
// With spark.authenticate on, every connection is authenticated (package
// netty). The resource manager, the node managers and their clients share
// the cluster's secret; each application has its own, which submit
// generates (GenerateSecret) and sends with the submission
// (Submission.AppSecret). The resource manager keeps it in memory only
// (AppKeys, the resolver of its env's key ids) while the application
// lives, and puts it in the launch context of each of the application's
// containers; the node manager hands it to the process on an inherited pipe,
// file descriptor 3 (ContainerSecretFile), which the container's conf names
// as spark.authenticate.secret.file. No staged or container file holds a
// secret. An application master dials with its application id as key id
// (spark.authenticate.keyId). The resource manager takes an application
// master's messages only from a connection authenticated with that
// application's key, and client, admin and node-manager messages only with
// the cluster's key (ResourceManagerConfig.PeerKeyID); a node manager takes
// container starts and stops only from its resource manager
// (NodeManagerConfig.PeerKeyID), so application masters start executors
// through the resource manager (AmStartContainer), which checks the
// container was allocated to them.
//
// Node managers check application and container ids against the forms the
// resource manager mints (ValidateAppID, ValidateContainerID) before they
// become paths, keep their folders 0700 and files 0600, give containers a
// clean environment (NodeManagerConfig.EnvWhitelist adds variables) and
// remove what dead containers left on start.
//
// Applications' ACLs follow Spark: spark.acls.enable, spark.admin.acls,
// spark.modify.acls (kill) and spark.ui.view.acls (logs); the submitting
// user owns the application. Clients name the requesting user (SPARK_USER
// or the process's user, Client.AsUser); without Kerberos this is a claim,
// as with YARN's simple authentication.
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
package cluster
