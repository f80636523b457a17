// PeerStats: the transport's peers and their byte counters, for the
// driver UI's message-flow page (actor.PeerStatser).

package netty

import "github.com/sparkrpc/sparkrpc/actor"

// PeerStats implements actor.PeerStatser: the peers the transport knows
// now, with the counters its connections keep anyway (no cost per message).
func (t *Transport) PeerStats() []actor.PeerStats {
	var out []actor.PeerStats
	t.peers.Range(func(_, v any) bool {
		p := v.(*peer)
		p.mu.Lock()
		queued := p.out.size + p.writing
		p.mu.Unlock()
		out = append(out, actor.PeerStats{Identity: p.identity, Client: p.client, SentBytes: p.sentBytes.Load(),
			ReceivedBytes: p.recvBytes.Load(), QueuedBytes: queued})
		return true
	})
	return out
}
