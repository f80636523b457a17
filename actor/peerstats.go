// Snapshots of the peers an env's transport talks to, for monitoring pages:
// bytes each way and bytes waiting to be written.

package actor

import (
	"slices"
	"strings"
)

// PeerStats is a snapshot of one peer of an env's transport: an env it
// has a connection (or an outbox) for.
type PeerStats struct {
	// Identity is the peer's identity: host:port, or the client id of a
	// client-mode peer.
	Identity string
	// Client reports a client-mode peer (one that does not listen).
	Client bool
	// SentBytes and ReceivedBytes count the bytes written to and read
	// from its connections since the transport met it.
	SentBytes, ReceivedBytes uint64
	// QueuedBytes are outbound bytes not yet written.
	QueuedBytes int
}

// PeerStatser is implemented by a transport that can list its peers
// (netty's does): an optional capability of a Transport.
type PeerStatser interface {
	PeerStats() []PeerStats
}

// PeerStats returns a snapshot of the peers of the env's transport,
// sorted by identity: nil without a transport, or with one that does not
// implement PeerStatser. It reads counters the transport keeps anyway.
func (e *Env) PeerStats() []PeerStats {
	ps, ok := e.transport.(PeerStatser)
	if !ok {
		return nil
	}
	out := ps.PeerStats()
	slices.SortFunc(out, func(a, b PeerStats) int { return strings.Compare(a.Identity, b.Identity) })
	return out
}
