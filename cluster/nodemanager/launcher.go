package nodemanager

// This file holds the seam between a node manager and the processes of
// its containers: the Launcher that starts them, what it is given, and
// what it gives back.

import "syscall"

// Launcher starts the processes of a node manager's containers. The node
// manager prepares a container first (its working folder with its files,
// its log folder, its environment) and then asks its Launcher to start
// the command; it watches the returned process until it exits, and stops
// it with SIGTERM, then SIGKILL after the kill grace.
//
// The default (Config.Launcher nil) starts each container as a child
// process of this one, leading its own process group. Another Launcher
// runs containers some other way; the deterministic simulation runs their
// programs in its own process. Implementations must be safe for
// concurrent use.
type Launcher interface {
	// Launch starts c's command. An error fails the container's start,
	// which the node manager reports to whoever asked for it.
	Launch(c ContainerLaunch) (ContainerProcess, error)
}

// ContainerLaunch is a container that is ready to start: what a Launcher
// is given.
type ContainerLaunch struct {
	// ID and AppID are the container's and its application's ids.
	ID, AppID string
	// Command is the command to run; its first word "sparkrpc" has
	// already been replaced by the program the container runs.
	Command []string
	// Env is the container's whole environment, as KEY=VALUE entries.
	Env []string
	// WorkDir is its working folder, with the launch context's files in
	// it; LogDir is where its stdout and stderr go.
	WorkDir, LogDir string
	// Secret, when set, is the application's secret, which the process
	// gets on a pipe as file descriptor 3 (cluster.ContainerSecretFile).
	Secret []byte
}

// ContainerProcess is a started container: its process and whatever that
// process started.
type ContainerProcess interface {
	// Pid is the process's id (the node manager reports and shows it).
	Pid() int
	// Wait blocks until the process and what it started have exited, and
	// returns its exit status: its exit code, ExitSignalBase plus the
	// signal's number when a signal ended it, cluster.ContainerExitInvalid
	// when no status is known. It is called once.
	Wait() int
	// Signal sends sig (syscall.SIGTERM or syscall.SIGKILL) to the
	// process and what it started. It may be called after the process
	// exited.
	Signal(sig syscall.Signal) error
}
