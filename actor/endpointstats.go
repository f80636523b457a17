// Snapshots of the registered endpoints for monitoring: names, queued and
// handled messages.

package actor

import (
	"slices"
	"strings"
)

// EndpointStats is a snapshot of one registered endpoint, for monitoring
// pages and metrics.
type EndpointStats struct {
	// Name is the endpoint's name in its env.
	Name string
	// Queued is the number of messages waiting in its mailbox (its inbox
	// depth; a batch already taken by its loop is not counted).
	Queued int
	// Received counts the messages (sends and asks) delivered to its
	// mailbox since it was registered, Queued of them not yet taken.
	Received uint64
}

// EndpointStats returns a snapshot of the endpoints registered and reachable
// by name, sorted by name. It takes no lock that a handler holds and is
// cheap enough to call on every page view; the counts of different
// endpoints are not read at one instant.
func (e *Env) EndpointStats() []EndpointStats {
	var out []EndpointStats
	e.endpoints.Range(func(_, v any) bool {
		c := v.(*cell)
		c.mb.mu.Lock()
		out = append(out, EndpointStats{Name: c.name, Queued: c.mb.queuedLocked(), Received: c.receivedCount()})
		c.mb.mu.Unlock()
		return true
	})
	slices.SortFunc(out, func(a, b EndpointStats) int { return strings.Compare(a.Name, b.Name) })
	return out
}
