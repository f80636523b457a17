// Package cluster is the vocabulary of sparkrpc's job-submission path, which
// follows Spark on YARN and on Kubernetes on top of the actor, netty and
// endpoints packages: masters, the submission's configuration and the
// cluster managers that run it, the registry of applications and what an
// application sees (AppContext), ids, states, configuration keys, the names
// the cluster's processes find each other by, errors, ACLs and secrets.
//
// # Packages
//
// The cluster's parts are packages of their own, each importing this one:
//
//	cluster/resourcemanager  the resource manager daemon (YARN's ResourceManager)
//	cluster/nodemanager      the node manager daemon: containers as child processes
//	cluster/rmclient         the resource manager's client: submit, report, kill, logs
//	cluster/appmaster        the application master: the driver in cluster mode, the
//	                         allocator, and the driver's link to it (SchedulerBackend)
//	cluster/driverrun        what every driver shares: its UI, running the application,
//	                         the readiness rule, task progress
//	cluster/local            the cluster manager of local[N]
//	cluster/yarn             the cluster manager of local-cluster[W,C,M] and rm://
//	cluster/kubernetes       the cluster manager of k8s://
//	cluster/managers         the list of cluster managers Submit chooses from
//
// # Applications
//
// An application is a Go function registered by name with RegisterApp,
// usually from an init function; the name is submit's --class. It brings up
// its driver with AppContext.Driver, runs jobs of registered task functions
// (see package endpoints), and writes its results to AppContext.Stdout.
//
// # Masters and cluster managers
//
// ParseMaster understands local[N] (driver and one executor in this
// process), local-cluster[W,C,M] (a resource manager and W node managers
// with C cores and M MiB each embedded in this process, plus a node of the
// AM's size reserved for the application master, so that each worker runs
// one executor with its C cores, as in Spark; the AM/driver and executors
// are child processes of the same binary), rm://host:port (a running
// resource manager) and k8s://https://host:port. Submit hands an
// application to the first ClusterManager (Spark's ExternalClusterManager)
// that accepts its master; managers.Submit offers every one sparkrpc ships.
//
// # Networks
//
// The cluster's processes create their envs through a Network: TCPNetwork
// (netty's TCP transport) by default. SubmitConfig.Network and
// appmaster.Config.Network accept another implementation, such as one over
// actor.MemNetwork when every env is in one process.
//
// # Security
//
// With spark.authenticate on, every connection is authenticated (package
// netty). The resource manager, the node managers and their clients share
// the cluster's secret; each application has its own, which submit
// generates (GenerateSecret) and sends with the submission. The resource
// manager keeps it in memory only (AppKeys, the resolver of its env's key
// ids) while the application lives; a container reads it from an inherited
// pipe (ContainerSecretFile). No staged or container file holds a secret
// (WithoutSecrets, ContainerAuthConf). Applications' ACLs follow Spark:
// spark.acls.enable, spark.admin.acls, spark.modify.acls (kill) and
// spark.ui.view.acls (logs); the submitting user (CurrentUser) owns the
// application. Without Kerberos the user is a claim, as with YARN's simple
// authentication.
//
// # Files
//
//	acls.go        ACLs, who the current user is, and what the lists allow
//	appcontext.go  AppContext: what a running application sees; StartFunc, ExecutorControl
//	apps.go        the registry of applications by name (--class)
//	appsecret.go   the application's secret: generated, kept by id, kept out of confs
//	errors.go      errors and exit codes (the AM's, and a container's)
//	ids.go         application and container ids: minted, parsed, validated
//	keys.go        the configuration keys, with Spark's names
//	master.go      master URLs
//	names.go       the endpoint and file names the cluster's processes share
//	network.go     Network and TCPNetwork: how the processes create their envs
//	state.go       application states, final statuses and resources
//	submit.go      SubmitConfig, ClusterManager and Submit
package cluster
