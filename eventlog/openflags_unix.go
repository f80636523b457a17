//go:build unix

package eventlog

import "syscall"

// openFlags makes an open of a FIFO return at once instead of waiting for
// its writer; a regular file reads as without it.
const openFlags = syscall.O_NONBLOCK
