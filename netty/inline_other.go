//go:build !unix

// No inline writes where sockets are not Unix descriptors.

package netty

// inlineWriter returns nil: outside Unix a socket is no descriptor that a
// plain write system call can take, so every frame goes through the
// connection's writer, as on TLS connections.
func inlineWriter(*conn) func(fd uintptr) bool { return nil }
