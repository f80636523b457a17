package netty

// hooks.go holds hooks, the points at which a test runs its own code
// inside a transport.

// hooks are functions that a package test sets on a Transport before the
// transport starts, to reach an interleaving that it could not otherwise
// arrange. Outside tests they are all nil, and each is checked for nil
// where it would run.
type hooks struct {
	// attach runs in attach once the peer is chosen, before the
	// connection is installed.
	attach func(p *peer)
	// accepted runs once the acceptor has attached an inbound connection
	// and before it writes its last handshake frame.
	accepted func(c *conn)
	// inlineWrite runs at the start of every inline write.
	inlineWrite func(c *conn)
	// released runs at the end of every release.
	released func(c *conn)
}
