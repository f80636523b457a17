//go:build unix

package regularfile

import (
	"errors"
	"syscall"
)

// nonBlock makes the open of a FIFO return at once; a regular file reads as
// without it. noFollow makes the open of a symbolic link fail with ELOOP.
const (
	nonBlock = syscall.O_NONBLOCK
	noFollow = syscall.O_NOFOLLOW
)

// isLoop reports whether err is the open of a symbolic link with noFollow.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
