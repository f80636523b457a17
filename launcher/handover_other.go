//go:build !linux

// The process attributes of a program a submission is handed over to, on
// systems other than Linux.

package launcher

import "syscall"

// handOverProcAttr is nil: other systems have no parent-death signal, so
// there the program outlives a submit that is killed outright.
func handOverProcAttr() *syscall.SysProcAttr { return nil }
