// Which env a one-way message came from, for the endpoints that ask.

package actor

// PeerAware is implemented by endpoints whose handlers read, with
// Context.Peer, which env each message came from. One-way messages carry no
// sender, as in Spark, so an endpoint that authorizes what a peer may do
// by who it is, rather than by what its message says, needs this. It
// costs one small allocation for each one-way message from another env,
// so other endpoints do without. A PeerAware endpoint must be serial (a
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

// inboundFrom is a one-way message (or a Deferred one) from another env,
// as the mailbox of a PeerAware endpoint queues it: the item, and the env
// it came from.
type inboundFrom struct {
	item any
	from string
}

// fromPeer wraps item, a one-way message from the env from, for a
// PeerAware endpoint's mailbox.
func fromPeer(item any, from string) *inboundFrom {
	if from == "" {
		from = UnknownPeer // from another env, whichever: never this one
	}
	return &inboundFrom{item: item, from: from}
}

// receiveFrom handles m's item with ctx.Peer saying where it came from.
// The endpoint is serial, so the item is handled before this returns.
func (c *cell) receiveFrom(m *inboundFrom) {
	c.ctx.peer = m.from
	defer func() { c.ctx.peer = "" }()
	c.receive(m.item, nil)
}
