// The transport's hook on the release of a peer's lock.

package netty

import "github.com/sparkrpc/sparkrpc/internal/lockhook"

// WithLockRelease sets a function that the transport calls each time it
// has released the lock of a peer (the state it keeps for one remote env:
// its connection, its outbox and its credit), on the goroutine that
// released it. Sends, the attach of a new connection and the close of an
// old one all take that lock, so its releases are the points at which
// another goroutine may step in between two of their steps. A
// deterministic simulator makes them scheduling points of its own (it
// yields there when its seed says), to explore how a connection's attach
// and another connection's close interleave; release must not block and
// must not call the transport. The default (nil) costs one comparison per
// release.
func WithLockRelease(release func()) Option {
	return optionFunc(func(o *options) { o.lockRelease = release })
}

// newPeer returns a peer of identity whose lock calls the transport's
// release hook.
func (t *Transport) newPeer(identity string, client bool) *peer {
	return &peer{identity: identity, client: client, mu: lockhook.Mutex{Released: t.opts.lockRelease}}
}
