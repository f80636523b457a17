// A container's process attributes on Linux.

package nodemanager

import "syscall"

// containerProcAttr makes a container's process lead its own process group
// (stopped as a whole), and has the kernel kill it if the node manager
// dies without stopping it.
func containerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
