//go:build unix && !linux

// A container's process attributes on Unix systems other than Linux.

package nodemanager

import "syscall"

// containerProcAttr makes a container's process lead its own process group
// (stopped as a whole). Only Linux can have the kernel kill it when the
// node manager dies: elsewhere a container outlives a node manager that
// is killed without stopping its containers.
func containerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
