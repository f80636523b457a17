package actor

// PendingAsks reports the asks of this env that wait for a reply from the
// peer whose transport identity is peer: how many, and the sequence number
// of the newest of them (0 when there is none). Sequence numbers grow with
// every remote ask the env makes, so a transport that sees the same newest
// number twice knows that no ask to the peer was made in between. A
// transport uses it to tell a dead connection (asks outstanding, nothing
// received) from an idle one, as Spark's TransportChannelHandler does.
func (e *Env) PendingAsks(peer string) (n int, newest uint64) {
	r := e.futures
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		for id, f := range s.m {
			if f.peer == peer && f.state.Load() == 0 {
				n++
				newest = max(newest, id)
			}
		}
		s.mu.Unlock()
	}
	return n, newest
}
