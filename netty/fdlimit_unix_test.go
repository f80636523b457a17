//go:build unix

package netty_test

import "syscall"

// openFileLimit is the process's limit of open files (ulimit -n), or -1
// when unknown.
func openFileLimit() int64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return -1
	}
	return int64(l.Cur) //nolint:gosec // a limit fits
}
