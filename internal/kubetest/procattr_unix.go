//go:build unix && !linux

// A control-plane process's attributes on Unix systems other than Linux.

package kubetest

import "syscall"

// procAttr makes a component lead its own process group. Only Linux can
// have the kernel kill it when the process that started it dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
