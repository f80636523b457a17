// The transport's shutdown: flushing what was queued, closing every connection.

package netty

import (
	"context"
	"net"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
)

// flushTimeout bounds how long Shutdown waits for queued frames to be written.
const flushTimeout = 2 * time.Second

// flush waits until the writers have sent what was queued before Shutdown,
// at most until ctx ends or flushTimeout passes.
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
	if len(waits) == 0 {
		return
	}
	timer := time.NewTimer(flushTimeout)
	defer timer.Stop()
	for _, ch := range waits {
		select {
		case <-ch:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
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
	// updates, say) before the connections close.
	t.flush(ctx, peers)
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
