// Which env a one-way message came from, for the endpoints that ask.

package actor

// PeerAware is implemented by endpoints whose handlers read, with
// Context.Peer, which env each message came from. One-way messages carry no
// sender, as in Spark, so an endpoint that authorizes what a peer may do
// by who it is, rather than by what its message says, needs this. Its
// mailbox records the env beside each one-way message from another env. A PeerAware endpoint must be serial (a
// ThreadCount of at most 1): RegisterEndpoint refuses one that is not.
type PeerAware interface {
	// PeerAware reports whether the endpoint reads Context.Peer; it is
	// asked once, when the endpoint is registered.
	PeerAware() bool
}

// UnknownPeer is what Context.Peer says of a message from another env
// whose transport did not tell which env it came from.
const UnknownPeer = "?"

// Peer returns the identity of the env the message being handled came
// from, as its transport knows the connection it arrived on (the
// identity a peer authenticated with; never a field of the message), or
// "" for a message from this env. It is valid during the handler's call,
// and only for an endpoint that is PeerAware: for the one-way messages of
// other endpoints it is "" too. For an ask, CallContext.Peer is its
// SenderIdentity.
func (c *Context) Peer() string { return c.peer }

// Peer returns the asker's identity (SenderIdentity): "" for an ask from
// this env.
func (c *CallContext) Peer() string { return c.SenderIdentity() }

// peerOf is what Context.Peer says of a one-way message from the env
// from, as a PeerAware endpoint's mailbox records it beside the message.
func peerOf(from string) string {
	if from == "" {
		return UnknownPeer // from another env, whichever: never this one
	}
	return from
}

// peerInvoker is the consumer of a mailbox that takes the env a message
// came from with it: a cell, for a PeerAware endpoint.
type peerInvoker interface {
	invokeFrom(msg any, from string)
}

// invokeFrom handles msg, a one-way message (or a Deferred one) from the
// env from, with ctx.Peer saying so. The endpoint is serial, so msg is
// handled before this returns.
func (c *cell) invokeFrom(msg any, from string) {
	c.ctx.peer = from
	defer func() { c.ctx.peer = "" }()
	c.receive(msg, nil)
}
