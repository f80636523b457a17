// The lock of a peer, and the transport's hook on its release.

package netty

import "sync"

// peerLock is a peer's lock. Every goroutine that sends to a peer,
// attaches a connection to it or closes its connection passes through it,
// so its releases are where those goroutines' interleaving is decided.
// When the transport was given a function with WithLockRelease, Unlock
// calls it once the lock is free.
type peerLock struct {
	sync.Mutex
	released func()
}

// Unlock releases the lock, then calls the release hook, if any.
func (l *peerLock) Unlock() {
	if l.released == nil {
		l.Mutex.Unlock()
		return
	}
	l.unlockAndCall()
}

// unlockAndCall is Unlock with a release hook, out of line so that Unlock
// stays cheap enough to inline on the send path.
func (l *peerLock) unlockAndCall() {
	l.Mutex.Unlock()
	l.released()
}

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
	return &peer{identity: identity, client: client, mu: peerLock{released: t.opts.lockRelease}}
}
