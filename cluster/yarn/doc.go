// Package yarn is the cluster manager of local-cluster[W,C,M] and
// rm://host:port (Spark's YARN Client): it submits an application to a
// resource manager, in cluster mode (the driver runs in the application
// master) or client mode (the driver runs here and an ExecutorLauncher
// allocates its executors), and follows it to its end. On local-cluster it
// first starts a resource manager and node managers in this process
// (LocalCluster), whose containers are child processes of this binary.
//
// In client mode the driver runs in the submitting process: it reports its
// task progress to the resource manager itself (RmTaskProgress), so that
// the application's report shows it as in cluster mode.
//
// A submission's program (SubmitConfig.Program) and files
// (SubmitConfig.Files) are staged on the resource manager between the new
// application and its submission, in both deploy modes; the node managers
// localize them for the AM and every executor, whose command's "sparkrpc"
// is then the program (rmclient.Submission).
//
// # Files
//
//	submit.go        Manager, the local cluster's and a resource manager's submission paths
//	clientmode.go    client deploy mode: the driver here, executors from the AM
//	localcluster.go  LocalCluster: a resource manager and node managers in this process
//	capacity.go      what fits where: executors per node, warnings and refusals
//	monitor.go       following the application: state lines, driver output, progress
package yarn
