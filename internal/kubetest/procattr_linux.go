// A control-plane process's attributes on Linux.

package kubetest

import "syscall"

// procAttr makes a component lead its own process group, and has the
// kernel kill it (SIGKILL) if the process that started it dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
