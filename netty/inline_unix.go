//go:build unix

// Inline writes on Unix: one write system call on the socket's descriptor.

package netty

import "syscall"

// inlineWriter returns the function that writes c's inline frame with one
// write system call that never waits for the socket (see writeInline).
func inlineWriter(c *conn) func(fd uintptr) bool {
	return func(fd uintptr) bool {
		c.inlineN, c.inlineErr = syscall.Write(int(fd), c.inlineBuf)
		return true // never wait for the socket: the writer does
	}
}
