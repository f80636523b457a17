//go:build !unix

package netty_test

// openFileLimit is the process's limit of open files, unknown here.
func openFileLimit() int64 { return -1 }
