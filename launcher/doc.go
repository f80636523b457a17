// Package launcher makes a Go program a complete sparkrpc program: the
// program registers its applications (cluster.RegisterApp) and task
// functions (endpoints.RegisterTask), then hands its command line over to
// Run. The same binary is then what its user submits and what runs in
// every container of a cluster, as a jar is in Spark:
//
//	func main() {
//		cluster.RegisterApp("SumOfSquares", sumOfSquares)
//		endpoints.RegisterTask("sumofsquares.square", square)
//		os.Exit(launcher.Run(os.Args[1:]))
//	}
//
// Run gives the program the commands every sparkrpc program has:
//
//	submit             spark-submit: submit [options] <program | spark-internal> [application arguments]
//	applicationmaster  the role a resource manager starts in an application's first container
//	executor           the role of an executor (Spark's CoarseGrainedExecutorBackend)
//	driver             the role of a cluster-mode driver pod on Kubernetes
//	version            the program's version (also --version)
//
// The sparkrpc command is built on it, with its daemons, client commands and
// bench added (WithCommands).
//
// # The primary resource
//
// submit's grammar is spark-submit's: options, in any order, then the
// primary resource, then the application's arguments, which may look like
// options. The primary resource is a program built on this package, or
// InternalResource ("spark-internal") for the applications compiled into
// the program that runs submit. When it is another program, submit hands
// over to that program's own submit, with the same command line; when it is
// this program, submit runs the application (locally, or on a cluster whose
// containers run the program, shipped to them: see cluster.SubmitConfig's
// Program). A program that is not built on this package is refused before
// anything starts: its main would take a container's command line as its
// own. Since submit runs the program, the primary resource must be a
// program for the machine that submits (unlike a jar, a Go program is built
// for one platform): build it for the cluster's platform and submit from a
// machine of that platform. spark-internal on a master that starts
// containers ships this program, unless WithInstalledOnCluster says the
// cluster's nodes have it.
//
// # Files
//
//	applicationmaster.go  the application master's role
//	doc.go                this overview
//	driver.go             the Kubernetes driver pod's role, and submit --kill/--status there
//	executor.go           the executor's role
//	launcher.go           Run, Command and their options
//	primary.go            the primary resource, and the hand-over to another program
//	submit.go             submit: its options, the application's configuration, --kill and --status
//	version.go            the version command
package launcher
