// The transport's shutdown: flushing what was queued, closing every connection.

package netty

import (
	"context"
	"net"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
)

// closeTimeout bounds how long Shutdown waits for queued frames to be
// written and for the peers to read them.
const closeTimeout = 2 * time.Second

// flush waits until the writers have sent what was queued before Shutdown,
// at most until ctx ends.
func (t *Transport) flush(ctx context.Context, peers []*peer) {
	var waits []chan struct{}
	for _, p := range peers {
		p.mu.Lock()
		c := p.conn
		// A busy connection has frames taken from the outbox and not yet
		// written: closing it now would lose them.
		if c == nil || (p.out.empty() && p.credit.heldB == 0 && !c.busy) {
			p.mu.Unlock()
			continue
		}
		ch := make(chan struct{})
		p.drained = ch
		p.mu.Unlock()
		waits = append(waits, ch)
		select {
		case c.sig <- struct{}{}:
		default:
		}
	}
	awaitAll(ctx, waits)
}

// endDrain tells a waiting Shutdown that nothing more is to be written to
// p: what was queued is written, or its connection closed. Called with p.mu
// held.
func (p *peer) endDrain() {
	if p.drained != nil {
		close(p.drained)
		p.drained = nil
	}
}

// awaitAll waits until every channel of chs is closed, at most until ctx
// ends.
func awaitAll(ctx context.Context, chs []chan struct{}) {
	for _, ch := range chs {
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// linger half-closes each connection whose writer is idle and waits, at
// most until ctx ends, for its peer to close its side once it has read to
// the end. Closing a socket outright while bytes the peer sent lie unread
// in it (a grant, say) resets the connection, and the reset makes the
// peer's system discard what it had received and not yet read: the very
// frames flush waited for. Nothing is written on a connection after its
// half-close.
func (t *Transport) linger(ctx context.Context, peers []*peer) {
	if ctx.Err() != nil {
		return
	}
	var waits []chan struct{}
	for _, p := range peers {
		p.mu.Lock()
		c := p.conn
		if c == nil || c.busy {
			p.mu.Unlock()
			continue
		}
		c.shut = true
		p.mu.Unlock()
		if hc, ok := c.nc.(interface{ CloseWrite() error }); ok && hc.CloseWrite() == nil {
			waits = append(waits, c.readDone)
		}
	}
	awaitAll(ctx, waits)
}

// Shutdown implements actor.Transport: it closes the listener and every
// connection without reporting them, fails what is still queued, and waits
// for its goroutines or ctx.
func (t *Transport) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	if !t.closing.CompareAndSwap(false, true) {
		t.mu.Unlock()
		return nil
	}
	t.mu.Unlock()
	close(t.done)
	if t.ln != nil {
		t.ln.Close()
	}
	t.mu.Lock()
	raw := make([]net.Conn, 0, len(t.raw))
	for nc := range t.raw {
		raw = append(raw, nc)
	}
	t.mu.Unlock()
	var peers []*peer
	t.peers.Range(func(_, v any) bool {
		peers = append(peers, v.(*peer))
		return true
	})
	// Send what was queued before Shutdown (an executor's last status
	// updates, say), and let the peers read it, before the connections
	// close.
	closing, cancel := context.WithTimeout(ctx, closeTimeout)
	t.flush(closing, peers)
	t.linger(closing, peers)
	cancel()
	for _, nc := range raw {
		nc.Close()
	}
	for _, p := range peers {
		p.mu.Lock()
		unsent := p.unsent
		p.unsent = nil
		if p.forget != nil {
			p.forget.Stop()
		}
		p.mu.Unlock()
		for _, q := range unsent {
			t.host.Undeliverable(q.target, q.sender, q.msg, actor.ErrEnvStopped)
		}
	}
	waited := make(chan struct{})
	go func() {
		t.wg.Wait()
		close(waited)
	}()
	select {
	case <-waited:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
