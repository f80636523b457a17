// Package nodemanager is the node manager daemon of sparkrpc's YARN-shaped
// cluster (YARN's NodeManager): it runs the containers the resource manager
// allocates to its node as child processes.
//
// A node manager registers with the resource manager, retrying with
// exponential backoff and jitter (each attempt logged) for up to
// Config.RegisterTimeout, and gives up with
// cluster.ErrRegistrationFailed then or as soon as its ctx ends. Submitting to a
// resource manager without node managers fails with cluster.ErrNoNodeManagers.
//
// A node manager (endpoint "NodeManager") starts each container as a child
// process in its own process group, with GOMEMLIMIT from the container's
// memory and stdout/stderr in the container's log folder, reports exit
// codes, and stops containers with SIGTERM and then SIGKILL after a grace
// period, on request and when it shuts down: their process group and, on
// Linux, the processes that left it but still carry the container's
// CONTAINER_ID in their environment. On Linux the kernel also kills
// a container whose node manager dies without stopping it; other Unix
// systems have no parent-death signal. The package needs Unix process
// groups, so it builds on Unix systems only. Config.Launcher replaces how
// a prepared container's process starts (the Launcher interface); the
// deterministic simulation runs containers' programs in its own process.
//
// # Localization
//
// A container whose launch context names staged resources (the user's
// program and --files) is answered at once and localizes them before its
// process starts (YARN's ContainerLocalizer): each resource the node lacks
// is read from the resource manager in chunks, a few in flight, into the
// application's file cache, Dir/apps/APP_ID/filecache/SHA256 (one copy
// per application and digest, fetched once however many containers need
// it at the same time), its size and SHA-256 checked, then linked into the
// container's working folder under its name (the program 0500, files 0400,
// read-only; folders 0700). A command whose first word is "sparkrpc" then runs the
// program. A mismatch, a resource the resource manager does not have or a
// write error completes the container with exit status -1000 and a
// diagnostic that names the resource (*cluster.LocalizationError). The
// cache goes when the resource manager's heartbeat answer says the
// application ended and none of its containers runs on the node, and,
// with every working folder, when a node manager starts.
//
// # Security
//
// A node manager takes container starts and stops only from its resource
// manager (Config.PeerKeyID). It checks application and container ids
// against the forms the resource manager mints (cluster.ValidateAppID,
// cluster.ValidateContainerID) before they become paths, keeps its folders
// 0700 and files 0600, gives containers a clean environment
// (Config.EnvWhitelist adds variables) with their application's secret on
// file descriptor 3, serves a container's logs only to its application's
// owner and the users its ACLs name, and removes what dead containers left
// on start.
//
// With Config.WebUI set, its containers get SPARK_LOG_URL_STDOUT and
// SPARK_LOG_URL_STDERR as http URLs of that UI (YARN's
// /node/containerlogs/{containerId}/{user}/{file}?start=-4096), which
// ReadContainerLog serves; without a web UI they get none.
//
// # Files
//
//	nodemanager.go     Config, Start, registration and heartbeats
//	containers.go      the endpoint and the containers' lifecycle
//	localizing.go      a container that localizes resources before it starts
//	localizer.go       the file cache: resources fetched once, verified, linked
//	fetch.go           reading a staged resource from the resource manager in chunks
//	process.go         a container's process: folders, environment, launch, status, stop
//	launcher.go        Launcher: the seam that starts a container's process
//	childprocess.go    the default Launcher: a child process in its own process group
//	escapees_*.go      the processes of a container that left its process group
//	procattr_linux.go  the process attributes on Linux (parent-death signal)
//	procattr_unix.go   the process attributes on other Unix systems
//	status.go          the snapshot of running containers (for the UI)
//	logs.go            listing and reading containers' logs
//	weblogs.go         the logs the web UI serves: log URLs, confined and bounded reads
//	auth.go            who may ask what
//	metrics.go         the Prometheus collector of containers and capability
package nodemanager
