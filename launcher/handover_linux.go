// The process attributes of a program a submission is handed over to, on
// Linux.

package launcher

import "syscall"

// handOverProcAttr has the kernel kill the program a submission was handed
// over to when submit dies without waiting for it (SIGKILL, the OOM
// killer, a second Ctrl-C): it goes with submit, as the containers of an
// embedded cluster do, rather than running on, orphaned, with its driver
// and executors.
func handOverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
