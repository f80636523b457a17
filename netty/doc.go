// Package netty is sparkrpc's network transport: Spark's NettyRpcEnv redone
// over TCP. A Transport implements actor.Transport, so an actor.Env built on
// it reaches endpoints of other envs by their spark://name@host:port address,
// and plain protoactor code (Send, Request, RequestFuture on a PID whose
// Address is another env) works across processes too.
//
// # Usage
//
//	env, err := netty.NewEnv("driver", conf, netty.WithPort(7077))
//	...
//	client, err := netty.NewEnv("fetcher", conf, netty.WithClientMode())
//	ref, err := client.SetupEndpointRef(ctx, env.Address(), "CoarseGrainedScheduler")
//
// or, to keep the transport at hand (for its Stats):
//
//	t := netty.NewTransport(netty.WithBindHost("0.0.0.0"), netty.WithAdvertiseHost("node1"))
//	env, err := actor.NewEnv("driver", conf, actor.WithTransport(t))
//
// Options: WithBindHost (default 127.0.0.1), WithAdvertiseHost (default the
// bind host), WithPort (default 0, a random port), WithClientMode,
// WithLogger, WithEnvOptions, WithAuthKeys (scoped secrets, below),
// WithNetwork (how it listens and dials: the operating system's TCP by
// default; a dialer through a proxy, or a simulated network, otherwise),
// WithLockRelease (a hook on the release of a peer's lock, where a
// simulator may let another goroutine in), WithRand (the source of the
// reconnect backoff's jitter).
//
// # Connections
//
// Two envs share one TCP connection, used in both directions. It is opened by
// the first env that sends to the other; when both dial at once, the dial of
// the env with the smaller identity wins and the other side uses it. A
// connection starts with a handshake (see messages/wire.proto): the protocol
// version (ProtocolVersion), the dialer's identity (its advertised
// "host:port", or a client id when it does not listen) and, with
// authentication on, a mutual challenge-response over the shared secret in
// which the dialer proves first: the acceptor answers the dialer's hello with
// a fresh nonce only, and sends its own proof only after the dialer's proof
// (over both nonces) has checked out, so a peer that can connect but does not
// know the secret gets nothing to guess it from offline. No application frame
// is read before the handshake has succeeded, and a handshake that takes
// longer than spark.network.auth.rpcTimeout (30s) closes the connection.
//
// A connection in handshake costs little: its read buffer is 512 bytes and
// grows to the full 64 KiB only once the handshake has succeeded.
//
// # Connection limits
//
// Inbound connections are bounded, by source address (the dialer's IP) and
// in total, so that one host's sockets cannot take every slot:
//
//   - At most spark.rpc.netty.maxPendingHandshakes (1024) accepted
//     connections may be in handshake at once, and at most
//     spark.rpc.netty.maxPendingHandshakesPerAddress (256) from one address;
//     one accepted past either is closed at once (a plain-text dialer is
//     told why: *RefusedError matching ErrTooManyHandshakes, its reason
//     naming the key) and counted in Stats.Refused. A handshake that does
//     not finish within spark.network.auth.rpcTimeout (30s) is closed, so
//     a flood of idle or slow sockets holds its slots for that long at most.
//   - At most spark.rpc.netty.maxConnections (8192) established inbound
//     connections, and spark.rpc.netty.maxConnectionsPerAddress (1024) from
//     one address; a handshake past either is refused once it has named
//     its peer (ErrTooManyConnections, the reason naming the key), counted
//     in Stats.RefusedConnections. A peer that reconnects replaces its own
//     connection and is never refused for that. Connections this env dials
//     are not counted.
//
// Refusals are logged at most every 10 seconds for each kind of limit.
//
// An established connection ends when its peer goes silent, as in Spark's
// transport (spark.rpc.io.connectionTimeout, by default
// spark.network.timeout, 120s): a peer that stops in the middle of a frame
// for that long, or a connection on which asks of this env wait while
// nothing is received or written and no ask is made for that long, is
// closed with a *ConnectionTimeoutError, and the asks pending on it fail at
// once. A quiet connection with no ask outstanding stays open (until the
// idle timeout below). Only that
// connection is affected; each is checked four times per timeout, so it
// closes between one and one and a quarter timeouts after its peer went
// quiet.
//
// Idle connections are closed too. An inbound connection that receives
// nothing at all after its handshake is closed after
// spark.rpc.io.connectionTimeout. Any established connection, either
// direction, on which for spark.rpc.io.idleTimeout (30min; 0 turns it off)
// nothing was received or written, no ask of this env waited and nothing
// it delivered waited to be processed, is closed. Such a close loses
// nothing (the closing side shuts its write side and reads on until the
// peer closes its own, so that what the peer sent before it heard of the
// close is delivered): it is reported as a normal disconnect (endpoints' OnDisconnected
// runs, on both sides, as for any closed connection), counted in
// Stats.IdleClosed, and the next Send to a listening peer dials again.
// Whether endpoints still hold refs to the peer does not count: a ref holds
// no connection. Daemons that must not see each other disconnect (an
// executor and its driver, which end on OnDisconnected, as in Spark) keep
// their connection busy with heartbeats far more often than the idle
// timeout; a client-mode peer, which cannot be dialled, must send (poll,
// heartbeat) at least once per idle timeout to stay reachable.
//
// An identity cannot be taken over. A client-mode peer's identity is
// self-certifying (see Client mode), so its new connection is the same
// client reconnecting and replaces the one it had. A second inbound
// connection that claims a listening identity ("host:port") while a
// connection with that identity is live is held for at most
// spark.rpc.io.identityProbeTimeout (1s): if the live connection closes
// meanwhile (the peer restarted at the same address, and its old
// connection's end is arriving) the new one takes its place; otherwise it
// is refused with ErrIdentityInUse (a *RefusedError on the dialer's side),
// counted in Stats.IdentityInUse and logged at most every 10 seconds. A
// connection this env dialled reached whoever listens at the address, so
// it replaces an inbound connection that claimed that address while the
// dial was under way. A listening identity that no live connection holds
// is taken at its word, as the address that replies and sends to it use
// until the connection closes: with spark.authenticate on, only a holder
// of a secret this env accepts can claim one (Transport.PeerKeyID tells
// which). TLS with a trust store authenticates the listener a dialer
// reaches and, as a listener with a trust store requires a client
// certificate it accepts, the dialer; it does not tie the address a dialer
// claims to its certificate. When a
// connection is replaced, the old connection's
// reader delivers what it had already read and stops before the new
// connection delivers anything, so a peer's messages keep their order
// across a reconnect.
//
// Frames are a 4-byte big-endian length and a protobuf message; after the
// handshake each is a messages.WireEnvelope naming the target endpoint (or
// reply future), the sender PID, the message's protobuf full name and its
// bytes. The receiver resolves the type in protoregistry.GlobalTypes: a type
// it does not know, or bytes it cannot decode, fail the asker with an
// RpcFailure of code DECODE.
//
// # Outbox
//
// Each peer has an outbox. Send marshals the message into the outbox's
// buffer at once (so a message over spark.rpc.message.maxSize, or one that
// cannot be marshalled, fails in Send, with an *actor.MessageTooLargeError
// naming the key or an *EncodeError) and returns; the connection's writer
// goroutine sends whatever accumulated in one write. A lone ask or reply
// on a quiet plaintext connection, on Unix (a few microseconds since the
// last write ended, and it carried one frame, as when one ask is in
// flight) is written by Send itself with one system call that never waits;
// what the socket does not take at once goes to the writer. One-way
// messages always go out in the writer's batches. Send never blocks on the
// socket. Messages to one peer go out in the order of Send. When there is
// no connection, the first Send starts one connect; if it fails, every
// queued message fails at once
// (TransportHost.Undeliverable) with a *ConnectError; one that timed out
// wraps a *ConnectTimeoutError, which names the key to raise
// (for the dial spark.rpc.io.connectionCreationTimeout, or the key it
// defaults to that is set,
// spark.network.auth.rpcTimeout for the handshake) and matches
// actor.ErrTimeout. For a backoff window
// after that, Send and Ask to the peer fail at once with the same error
// rather than dialling again, so a peer that is down is not redialled by
// every message; the first Send after the window connects again. The window
// starts at spark.rpc.io.connectBackoff (100ms), doubles with each failed
// connect up to spark.rpc.io.connectBackoffMax (10s), is randomised by ±50%,
// and is reset by any connection to the peer. A peer leaves the transport's
// tables when its connection closes (or, after a failed connect, when it
// has been idle past its window by the cap), so peers that come and go
// leave nothing behind. The
// outbox is bounded: when the bytes queued for a peer and not yet written
// to its socket would exceed spark.rpc.io.maxQueuedBytesPerConnection
// (default 64m), Send fails at once with a *QueueFullError (errors.Is
// ErrQueueFull) that names the key and the queued size, and so does an Ask;
// nothing is queued or dropped silently. A message is always taken when the
// outbox is empty, whatever its size. The bound counts the frames' bytes;
// the buffers holding them can take up to twice that, since a frame over
// 64 KiB is encoded into a pooled buffer of the next power of two. When a
// connection closes, the frames
// it had not written are reported like those of a failed connect: each ask
// fails at once, each one-way message is counted in Env.Dropped and logged
// (the env rate-limits those lines). A reply
// that cannot be marshalled or is too large is replaced by an RpcFailure
// (code ENCODE or TOO_LARGE), so the asker fails at once rather than timing
// out.
//
// # Inbound flow control
//
// A connection may have delivered at most
// spark.rpc.io.maxInFlightMessagesPerConnection messages (default 10000),
// of at most spark.rpc.io.maxInFlightBytesPerConnection frame bytes
// (default 64m), that the local endpoints have not processed yet (replies
// to this env's asks complete their ask at once and are not counted). Past either bound the connection is
// not read until the endpoints catch up, so the sender's TCP window closes,
// its outbox fills and its Send and Ask fail with a *QueueFullError: a fast
// sender cannot move its backlog into this env's memory, and nothing is
// dropped. The bound holds per connection, so every message on it would
// wait, whatever its endpoint, once it is reached: each side therefore
// grants its peer a credit per endpoint of a quarter of the bound
// (credit.go), and a sender holds what exceeds an endpoint's credit in a
// queue of that endpoint in its own outbox (counted in
// spark.rpc.io.maxQueuedBytesPerConnection), until the endpoint has
// processed what it was sent. One slow endpoint so holds up only its own
// messages: the connection stays readable for the others and for replies
// (unless four endpoints are flooded at once), and a peer that ignores
// the credit it accepted is cut off. A handler that asks that same peer and waits
// while its connection is over the bound waits until its ask times out:
// keep the bounds well above what a handler leaves queued. A concurrent
// endpoint (Isolated, ThreadCount > 1) counts a message as processed once
// it is queued for its handler goroutines (a queue of at most 1024).
//
// # Large messages without a copy
//
// A frame larger than the reader's 64 KiB buffer, up to 1 MiB, is read into
// a pooled buffer and decoded on its endpoint's loop. By default the decoded
// message owns its memory: its payload is copied out of the buffer, which
// goes back to its pool. An endpoint that implements actor.Borrower gets it
// decoded with vtprotobuf's UnmarshalVTUnsafe instead (for types generated
// with vtprotobuf's unmarshal_unsafe feature, as every type of package
// messages is; any other type is copied): its bytes and string fields alias
// the buffer, which is reference counted and goes back to its pool once
// the handler has returned and every actor.Context.Retain of the message
// has been released. Stats.LentBuffers and Stats.LentBytes count what is
// lent. A connection lends at most spark.rpc.io.maxLentBytesPerConnection
// bytes of buffers (default: the in-flight bytes bound, 64m); past it
// messages are copied, so a peer cannot make this side pin more, and an
// endpoint that retains messages never stops the reader. Debugging a use
// after release: spark.rpc.io.poisonReleasedBuffers=true overwrites every
// released buffer with the pattern 0xdeadbeef and does not reuse it, so
// that a message kept without Retain reads poison; and under the race
// detector a release writes the buffer, so that a read of the message on
// another goroutine not ordered before the release is reported as a race.
//
// # Client mode
//
// With WithClientMode the transport does not listen. Its identity is a
// self-certifying client id: at Start it makes an Ed25519 key, and its
// identity is "client-" and the hex of the first 16 bytes of SHA-256 of the
// public key. Its handshake sends the public key and signs the acceptor's
// fresh nonce (with authentication on or off), and the acceptor refuses a
// client whose identity is not its key's or whose signature does not
// verify (ErrAuthFailed): nobody else can claim a client's identity, so the
// replies and messages for a client go only to connections the client
// opened. Its endpoints' refs read spark-client://name; peers reach them,
// and reply to its asks, over the connections it opened. For a peer in
// client mode, PeerAddress (hence CallContext.SenderAddress and timeout
// errors) is the socket address of its connection.
//
// # Events
//
// The transport talks to its env only through the actor.TransportHost it is
// given by Start: inbound messages go to Deliver (replies to LookupReply,
// with the connection's peer identity, which must be the peer the ask went
// to; a message for a name that runs no endpoint to NoEndpoint, undecoded;
// a connection keeps the Inbox of each endpoint it delivers to, and
// posts to it until the endpoint stops: the frames it reads for one endpoint
// in a row, up to 32 of them, with one Inbox.PostBatch, and always before a
// read that may wait), events to Connected, Disconnected
// and NetworkError, messages that could not be sent to Undeliverable; the
// inbound flow control uses AfterProcessed and the idle check PendingAsks.
//
// Every established connection is reported with TransportHost.Connected,
// and its end with Disconnected (after NetworkError when it ended with an
// error); the host then fails every ask pending on that peer at once. The
// peer's address in events is its listen address, or its socket address when
// it does not listen. Connections closed by Shutdown are not reported.
//
// # Limits and bad input
//
// spark.rpc.message.maxSize (MiB, default 128) bounds every frame. A peer
// that announces a bigger frame, sends garbage, a malformed envelope or a
// bad handshake has its connection closed without the claimed size being
// allocated; it is counted in Stats.ProtocolErrors and every other
// connection keeps working. Large frames are read in 1 MiB steps as their
// bytes arrive. A sender names a recurring envelope (target, sender id and
// type) by a reference it defines once per connection (refs.go): a peer's
// definitions are bounded (256, of at most 512 bytes of names each), and a
// frame that names a reference its peer has not defined closes the
// connection as well.
//
// Nothing a peer writes in a frame routes or dials: the sender of a message
// is the connection's peer (the envelope's sender_address is ignored and no
// longer written), and replies and failure notices go only over the peer's
// existing connection, else they are dropped (ErrReplyUnrouted,
// Stats.UnroutedReplies). A reply is taken only from the peer its ask went
// to (Stats.ForgedReplies counts the others, logged at most once a minute),
// and only of the type the ask takes. A frame is decoded only once its
// target is found and accepts its type (actor.Acceptor, actor.Router;
// *RefusedTypeError, Stats.RefusedTypes), and only when its decoded form
// stays within the decode bound: 16 bytes per payload byte + 4 KiB, and
// sub-messages nested at most 100 deep (*DecodeLimitError). The bound is
// fixed, not configured.
//
// # Errors and counters
//
// Send fails with an *actor.MessageTooLargeError (errors.Is
// actor.ErrMessageTooLarge), an *EncodeError, a *QueueFullError, or
// ErrTransportClosed after Shutdown. A queued message whose connect failed is reported to the host
// with the connect error. Handshake failures match ErrAuthFailed,
// ErrProtocol, ErrDuplicateConnection, ErrTooManyHandshakes,
// ErrTooManyConnections or ErrIdentityInUse (a
// *RefusedError carries the peer's reason); a peer of another protocol
// version is a *VersionError, which names both versions and matches
// ErrProtocol, on both sides. A connection closed for a silent
// peer fails its asks with an *actor.ConnectionClosedError wrapping a
// *ConnectionTimeoutError that names the key; an idle connection closes
// with an *IdleTimeoutError, reported as a normal disconnect.
// Transport.Stats counts open connections, connections closed for protocol
// errors, failed authentications, connections in handshake, connections
// refused at the handshake and connection limits, impostors of a live
// identity, connections closed for a silent peer, idle connections closed,
// forged replies, unrouted replies and frames refused for their type.
//
// # Configuration
//
// Keys read from the env's Conf:
//
//	spark.rpc.message.maxSize        MiB, default 128
//	spark.port.maxRetries            default 16: binds retry port+1, port+2, ...
//	spark.network.auth.rpcTimeout    handshake (TLS included) bound, default 30s
//	spark.rpc.io.connectionCreationTimeout  connect bound, default spark.rpc.io.connectionTimeout
//	spark.rpc.io.connectBackoff      first window after a failed connect in which Send to
//	                                 that peer fails at once, default 100ms (0: off)
//	spark.rpc.io.connectBackoffMax   its cap (it doubles per failure, ±50%), default 10s
//	spark.rpc.io.connectionTimeout   a batch the peer does not accept within this long, a
//	                                 frame stalled this long, or this long quiet with asks
//	                                 outstanding closes the connection, default
//	                                 spark.network.timeout (120s)
//	spark.rpc.io.identityProbeTimeout  how long a live connection may take to close
//	                                 when a new one claims its listening identity, default 1s
//	spark.rpc.io.idleTimeout         an established connection idle this long is closed,
//	                                 default 30min (0: off)
//	spark.rpc.netty.maxPendingHandshakes  accepted connections in handshake at most;
//	                                 more are refused, default 1024
//	spark.rpc.netty.maxPendingHandshakesPerAddress  the same from one source address,
//	                                 default 256
//	spark.rpc.netty.maxConnections   established inbound connections at most, default 8192
//	spark.rpc.netty.maxConnectionsPerAddress  the same from one source address,
//	                                 default 1024
//	spark.rpc.io.maxQueuedBytesPerConnection  bytes queued for one peer and not yet
//	                                 written; past it Send and Ask fail, default 64m
//	spark.rpc.io.maxInFlightMessagesPerConnection  messages delivered and not yet
//	                                 processed; past it the connection is not read, default 10000
//	spark.rpc.io.maxInFlightBytesPerConnection  their frame bytes, same effect, default 64m
//	spark.rpc.io.maxLentBytesPerConnection  bytes of read buffers lent to borrowed
//	                                 messages; past it they are copied, default the key above
//	spark.rpc.io.poisonReleasedBuffers  poison released lent buffers (tests), default false
//	spark.authenticate               default false
//	spark.authenticate.secret        the shared secret; required with spark.authenticate
//	spark.authenticate.secret.file   a file (mode 0600 or 0400: no permission for group or
//	                                 others) holding it, when the key above is unset
//	spark.authenticate.keyId         the id of the secret this env dials with, default ""
//	                                 (the acceptor's default secret); see Scoped secrets
//	spark.ssl.rpc.enabled            TLS on every connection, default false
//	spark.ssl.rpc.certChain          PEM certificate chain of this env (required on a server)
//	spark.ssl.rpc.privateKey         PEM private key of that certificate
//	spark.ssl.rpc.trustStore         PEM CA bundle; when set, both sides must present
//	                                 a certificate that chains to it (mutual TLS)
//	spark.ssl.rpc.verifyHostname     dialer checks the server's name, default true
//
// Each spark.ssl.rpc.X key falls back to spark.ssl.X. Both sides of a
// connection must agree on spark.authenticate and on TLS; a mismatch or a
// wrong secret refuses the connection and nothing is delivered.
//
// Shared-secret authentication proves the secret (HMAC-SHA256 over both
// sides' nonces and identities, with a label per role; the secret is never
// sent) but does not encrypt; enable TLS for confidentiality. The dialer
// proves first, so the acceptor reveals nothing to an unauthenticated peer;
// the dialer's proof goes to whatever listens at the address it dials (use
// TLS with a trust store to authenticate the server before that). Fresh
// nonces defeat replay; the role labels, and refusing a peer that claims the
// env's own identity or nonce, defeat reflection.
//
// # Scoped secrets
//
// One acceptor can accept several secrets, and tells which one each
// connection used: a resource manager, say, takes connections
// authenticated with the cluster's secret (clients, node managers) and with
// each running application's own (its application master). The dialer names
// the secret it proves with spark.authenticate.keyId; the id crosses the
// wire in the Handshake and is bound into both proofs, the secret never.
// The acceptor resolves the empty id to its own secret (AuthSecret) and any
// other through WithAuthKeys; an id it does not know fails exactly like a
// wrong secret (ErrAuthFailed, Stats.AuthFailures, the same refusal on the
// wire), so a dialer cannot probe which ids exist. Transport.PeerKeyID
// returns the id of a peer's live connection; an endpoint passes it
// ctx.SenderAddress().HostPort() to learn with which key the sender of a
// message authenticated.
package netty
