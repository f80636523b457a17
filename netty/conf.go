// The configuration keys of the transport and their defaults.

package netty

import (
	"errors"
	"fmt"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
)

// Configuration keys read by the transport. The TLS keys follow Spark's
// spark.ssl.rpc.* namespace; each falls back to the same key under spark.ssl.*
// (Spark's inheritance of SSL settings), so one set of files can serve every
// module.
// Defaults of the connection limits.
const (
	defaultMaxPendingHandshakes           = 1024
	defaultMaxPendingHandshakesPerAddress = 256
	defaultMaxConnections                 = 8192
	defaultMaxConnectionsPerAddress       = 1024
	defaultIdleTimeout                    = "30min"
)

const (
	// KeyPortMaxRetries is how many successive ports a server tries after
	// the requested one is taken (default 16).
	KeyPortMaxRetries = "spark.port.maxRetries"
	// KeyConnectionTimeout bounds one batched write to a peer: a peer that
	// does not accept it within this long has its connection closed (and
	// the asks pending on it failed). It is also Spark's idle timeout of a
	// connection: a peer that sends nothing for this long in the middle of
	// a frame, or while asks wait for its replies and none was made
	// meanwhile, has its connection closed (*ConnectionTimeoutError); an
	// idle connection with no ask outstanding stays open until
	// KeyIdleTimeout, except an inbound one that never sent anything after
	// its handshake, which is closed after this timeout. Default
	// spark.network.timeout (120s).
	KeyConnectionTimeout = "spark.rpc.io.connectionTimeout"
	// KeyMaxPendingHandshakes caps the accepted connections whose
	// handshake has not finished; a connection accepted past it is closed
	// at once (told why when not on TLS: ErrTooManyHandshakes), counted in
	// Stats.Refused and logged at most every 10 seconds. Default 1024.
	KeyMaxPendingHandshakes = "spark.rpc.netty.maxPendingHandshakes"
	// KeyMaxPendingHandshakesPerAddress caps them per source address (the
	// dialer's IP), so that one host cannot take every handshake slot; same
	// refusal. Default 256.
	KeyMaxPendingHandshakesPerAddress = "spark.rpc.netty.maxPendingHandshakesPerAddress"
	// KeyMaxConnections caps the established inbound connections; a
	// connection accepted past it is refused (ErrTooManyConnections),
	// counted in Stats.RefusedConnections and logged at most every 10
	// seconds. A peer's reconnect that replaces its own connection is never
	// refused. Connections this env dials are not counted. Default 8192.
	KeyMaxConnections = "spark.rpc.netty.maxConnections"
	// KeyMaxConnectionsPerAddress caps them per source address; same
	// refusal. Default 1024.
	KeyMaxConnectionsPerAddress = "spark.rpc.netty.maxConnectionsPerAddress"
	// KeyIdleTimeout closes an established connection, either direction,
	// on which for this long nothing was received or written, no ask of
	// this env waits and nothing delivered waits to be processed; its
	// endpoints see the peer disconnect, and the next Send to a listening
	// peer dials again. A client-mode peer is reachable only over the
	// connections it opens, so a client that waits for messages pushed to
	// it must send something (a heartbeat, a poll) at least this often.
	// An inbound connection that has received nothing at all since its
	// handshake is closed sooner, after spark.rpc.io.connectionTimeout. 0
	// turns the idle close off (not that of silent inbound connections).
	// Closes are counted in Stats.IdleClosed. Default 30min.
	KeyIdleTimeout = "spark.rpc.io.idleTimeout"
	// KeyIdentityProbeTimeout is how long an acceptor waits for the live
	// connection of a listening identity to close when a second inbound
	// connection claims that identity: a peer that restarted at the same
	// address gets in once its old connection's end has arrived (at once
	// when its process died, within TCP keepalive when its host did); a
	// claim while the old connection stays up is refused with
	// ErrIdentityInUse, counted in Stats.IdentityInUse. Default 1s.
	KeyIdentityProbeTimeout = "spark.rpc.io.identityProbeTimeout"
	// KeyConnectionCreationTimeout bounds a connect. Default
	// spark.rpc.io.connectionTimeout, whose default is
	// spark.network.timeout (120s), as in Spark.
	KeyConnectionCreationTimeout = "spark.rpc.io.connectionCreationTimeout"
	// KeyMaxQueuedBytes bounds the bytes queued for one peer (one
	// connection) and not yet written to its socket, frames being written
	// included. A Send or Ask that would go past it fails at once with a
	// *QueueFullError; a message is always taken when nothing is queued.
	// Spark size string, bytes by default; default 64m.
	KeyMaxQueuedBytes = "spark.rpc.io.maxQueuedBytesPerConnection"
	// KeyMaxInFlightMessages bounds the messages that one connection has
	// delivered to local endpoints and that they have not processed yet:
	// past it the connection is not read until they have, so that TCP flow
	// control pushes back on the sender. Default 10000.
	KeyMaxInFlightMessages = "spark.rpc.io.maxInFlightMessagesPerConnection"
	// KeyMaxInFlightBytes bounds the frame bytes of those messages in the
	// same way (for a frame over 64 KiB, which waits undecoded in a pooled
	// buffer of the next power of two, that buffer's bytes). Spark size
	// string, bytes by default; default 64m.
	KeyMaxInFlightBytes = "spark.rpc.io.maxInFlightBytesPerConnection"
	// KeyMaxLentBytes bounds the bytes of the buffers that one connection
	// has lent to the messages of borrowing endpoints (actor.Borrower) and
	// that are not released yet, retained ones included: past it, large
	// messages are decoded into memory of their own instead, so that a
	// peer cannot make this side hold more. A lent buffer is the pooled
	// chunk a frame over 64 KiB was read into, of the next power of two.
	// Spark size string, bytes by default; default
	// spark.rpc.io.maxInFlightBytesPerConnection (64m).
	KeyMaxLentBytes = "spark.rpc.io.maxLentBytesPerConnection"
	// KeyPoisonReleasedBuffers turns on the debug mode of lent buffers: a
	// buffer whose last reference is released is overwritten with the
	// pattern 0xdeadbeef and not reused, so that a borrowed message kept
	// past its handler without actor.Context.Retain reads poison in
	// tests. For tests only: it costs a write of every large message
	// and its buffer's reuse. Default false.
	KeyPoisonReleasedBuffers = "spark.rpc.io.poisonReleasedBuffers"
	// KeyConnectBackoff is the first backoff window after a failed connect
	// to a peer: within it, Send and Ask to that peer fail at once with the
	// *ConnectError instead of dialling again. Each further failed connect
	// doubles it, up to KeyConnectBackoffMax; it is randomised by ±50%, and
	// a connection to the peer resets it. 0 turns backoff off (every Send
	// after a failure dials). Default 100ms.
	KeyConnectBackoff = "spark.rpc.io.connectBackoff"
	// KeyConnectBackoffMax caps the backoff window (default 10s).
	KeyConnectBackoffMax = "spark.rpc.io.connectBackoffMax"
	// KeyAuthenticate turns on the shared-secret handshake (default false).
	KeyAuthenticate = "spark.authenticate"
	// KeyAuthenticateSecret is the shared secret; required when
	// KeyAuthenticate is true. It never crosses the wire.
	KeyAuthenticateSecret = "spark.authenticate.secret"
	// KeyAuthenticateSecretFile names a file that holds the shared secret,
	// read when KeyAuthenticateSecret is not set (Spark's
	// spark.authenticate.secret.file). The file must not be readable by
	// group or other. Processes that sparkrpc starts get their secret this
	// way: never on a command line or in an environment.
	KeyAuthenticateSecretFile = "spark.authenticate.secret.file"
	// KeyAuthenticateKeyID is the id of the secret this env authenticates
	// with when it dials (default empty: the acceptor's default secret). An
	// acceptor resolves a non-empty id through WithAuthKeys, so that one
	// acceptor can accept several secrets (the cluster's, and each
	// application's) and tell which one a connection used
	// (Transport.PeerKeyID). The id crosses the wire in the clear and is
	// bound into the proofs; the secret never does. At most 255 bytes;
	// ignored when KeyAuthenticate is off.
	KeyAuthenticateKeyID = "spark.authenticate.keyId"
	// KeyAuthTimeout bounds the whole connection handshake, TLS included
	// (default 30s).
	KeyAuthTimeout = "spark.network.auth.rpcTimeout"
	// KeySSLEnabled turns on TLS for every connection (default false).
	KeySSLEnabled = "spark.ssl.rpc.enabled"
	// KeySSLCertChain is a PEM file with this env's certificate chain.
	KeySSLCertChain = "spark.ssl.rpc.certChain"
	// KeySSLPrivateKey is a PEM file with the private key of the certificate.
	KeySSLPrivateKey = "spark.ssl.rpc.privateKey"
	// KeySSLTrustStore is a PEM file with the CA certificates that peers'
	// certificates must chain to. When set, both sides verify each other
	// (mutual TLS); when unset the system roots verify servers and clients
	// are not asked for a certificate.
	KeySSLTrustStore = "spark.ssl.rpc.trustStore"
	// KeySSLVerifyHostname makes a dialer check that the server certificate
	// names the host it dialled (default true).
	KeySSLVerifyHostname = "spark.ssl.rpc.verifyHostname"
)

// Defaults of the bounds.
const (
	defaultMaxQueuedBytes       = "64m"
	defaultMaxInFlightBytes     = "64m"
	defaultMaxInFlightMessages  = 10000
	defaultConnectBackoff       = "100ms"
	defaultConnectBackoffMax    = "10s"
	defaultIdentityProbeTimeout = "1s"
)

// positiveSize reads a size key in bytes that must be at least 1.
func positiveSize(conf *actor.Conf, key, def string) (int64, error) {
	n, err := conf.GetSizeAsBytes(key, def, 1)
	if err != nil {
		return 0, err
	}
	if n < 1 {
		v, _ := conf.Lookup(key)
		return 0, &actor.ConfError{Key: key, Value: v, Err: fmt.Errorf("must be at least 1 byte")}
	}
	return n, nil
}

// positiveTimeout reads the timeout key (def when unset; a bare number is
// in seconds), which must be positive: a zero timeout would fail every
// connect, handshake or write at once, so it fails where the configuration
// is read instead, as the ask timeouts do.
func positiveTimeout(conf *actor.Conf, key, def string) (time.Duration, error) {
	d, err := conf.GetDuration(key, def, time.Second)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, &actor.ConfError{Key: key, Value: conf.Get(key, def), Err: fmt.Errorf("%w: must be positive", actor.ErrInvalidTimeout)}
	}
	return d, nil
}

// timeoutOr reads the timeout key with positiveTimeout, or returns def
// when it is unset.
func timeoutOr(conf *actor.Conf, key string, def time.Duration) (time.Duration, error) {
	if !conf.Contains(key) {
		return def, nil
	}
	return positiveTimeout(conf, key, "")
}

// firstSet returns the first of keys that conf sets, def when it sets none:
// the key that set a value read through a chain of defaults.
func firstSet(conf *actor.Conf, def string, keys ...string) string {
	for _, k := range keys {
		if conf.Contains(k) {
			return k
		}
	}
	return def
}

// PortMaxRetries returns spark.port.maxRetries of conf (default 16): how
// many successive ports a server tries after a port in use. The transport,
// the web UIs and the daemons all read it here. A value that does not parse
// or is negative is a *actor.ConfError naming the key.
func PortMaxRetries(conf *actor.Conf) (int, error) {
	n, err := conf.GetInt(KeyPortMaxRetries, defaultMaxRetries)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		v, _ := conf.Lookup(KeyPortMaxRetries)
		return 0, &actor.ConfError{Key: KeyPortMaxRetries, Value: v, Err: errors.New("must be at least 0")}
	}
	return n, nil
}
