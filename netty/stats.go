// The counters of a Transport.

package netty

// Stats are counters of a Transport.
type Stats struct {
	// Connections is the number of established connections.
	Connections int
	// ProtocolErrors counts connections closed because the peer sent bytes
	// that are not the protocol: garbage, a malformed or oversized frame, a
	// bad or silent handshake, a failed TLS handshake.
	ProtocolErrors int64
	// AuthFailures counts handshakes refused because a side failed to prove
	// the shared secret.
	AuthFailures int64
	// Handshaking is the number of accepted connections whose handshake
	// has not finished yet.
	Handshaking int
	// Refused counts connections refused because
	// spark.rpc.netty.maxPendingHandshakes were in handshake already, or
	// spark.rpc.netty.maxPendingHandshakesPerAddress from their address.
	Refused int64
	// RefusedConnections counts connections refused because
	// spark.rpc.netty.maxConnections were established already, or
	// spark.rpc.netty.maxConnectionsPerAddress from their address.
	RefusedConnections int64
	// IdleClosed counts connections closed for being idle
	// (IdleTimeoutError).
	IdleClosed int64
	// IdentityInUse counts inbound connections refused because they claimed
	// the listening identity of a live connection (ErrIdentityInUse).
	IdentityInUse int64
	// TimedOut counts connections closed because the peer went silent in
	// the middle of a frame, or with asks outstanding (see
	// ConnectionTimeoutError).
	TimedOut int64
	// ForgedReplies counts replies dropped because the ask they name went
	// to another peer than the one of the connection they arrived on.
	ForgedReplies int64
	// UnroutedReplies counts replies and failure notices not sent because
	// the connection of the message they answer is gone: they are never
	// sent over a connection dialled for them.
	UnroutedReplies int64
	// RefusedTypes counts messages refused without being decoded because
	// their target (endpoint or ask) does not take their type.
	RefusedTypes int64
	// Undecodable counts messages that could not be decoded: a type this
	// process does not link, bytes that are not the type, a decoded form
	// over the decode bound. An asker is answered ERROR_CODE_DECODE.
	Undecodable int64
	// LentBuffers is the number of buffers lent to the messages of
	// borrowing endpoints (actor.Borrower) and not yet released, and
	// LentBytes their bytes.
	LentBuffers, LentBytes int64
}

// Stats returns the transport's counters.
func (t *Transport) Stats() Stats {
	return Stats{
		Connections: int(t.conns.Load()), ProtocolErrors: t.protocolErrors.Load(), AuthFailures: t.authFailures.Load(),
		Handshaking: int(t.handshaking.Load()), Refused: t.refused.Load(), TimedOut: t.timeouts.Load(),
		IdentityInUse: t.identityInUse.Load(), RefusedConnections: t.refusedConns.Load(), IdleClosed: t.idleClosed.Load(),
		ForgedReplies: t.forgedReplies.Load(), UnroutedReplies: t.unrouted.Load(), RefusedTypes: t.refusedTypes.Load(),
		Undecodable: t.undecodable.Load(), LentBuffers: t.lentBuffers.Load(), LentBytes: t.lentBytes.Load(),
	}
}
