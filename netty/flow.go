// Inbound flow control: what a connection delivered and its endpoints have not processed yet.

package netty

import "sync/atomic"

// inflow is the inbound flow control of a connection: the messages (and
// bytes) it delivered that the endpoints have not processed yet. The reader
// counts what it reads for each target in an open window; it closes a
// target's window by queueing a mark behind those messages at the endpoint
// (TransportHost.AfterProcessed), and when the mark runs, they are
// processed: the connection's count goes down and the target's credit goes
// back to the peer (credit.go). A target's window closes at a quarter of
// its credit, and every open window once the connection's open windows
// reach a quarter of its bound. Before each frame the reader checks the
// bound and, past it, stops reading until marks have run: TCP then pushes
// back on the sender (a peer that keeps to its endpoint credit gets there
// only with endpointShare endpoints flooded at once). The cost is a few
// loads per frame and one mark per window.
type inflow struct {
	pending  atomic.Int64  // messages of closed windows not yet processed
	pendingB atomic.Int64  // their bytes
	credit   chan struct{} // signalled when a window has been processed
	n, b     int64         // the open windows (reader only)
	open     []*target     // the targets with an open window, or that had one
}

// flowWindow is the fraction of the bound after which every window is
// closed.
const flowWindow = 4

// markedWindow is a closed window of one target waiting for its mark.
type markedWindow struct {
	c      *conn
	tg     *target
	n      int64 // messages
	credit int64 // their charge against the byte credit (frameCharge)
	b      int64 // the bytes they hold
}

func (w *markedWindow) processed() {
	tg := w.tg
	tg.inflight.Add(-w.n)
	tg.inflightB.Add(-w.credit)
	f := &w.c.flow
	f.pending.Add(-w.n)
	f.pendingB.Add(-w.b)
	select {
	case f.credit <- struct{}{}:
	default:
	}
	if w.c.grants.Load() {
		w.c.grant(tg.pid.Id, w.n, w.credit)
	}
}

// overCredit reports whether a frame for tg now exceeds the credit this
// side granted the peer for it, once the peer has accepted it.
func (c *conn) overCredit(tg *target) bool {
	if !c.enforce {
		return false
	}
	n, b := c.t.endpointCredit()
	return tg.inflight.Load()+tg.wn >= n || tg.inflightB.Load()+tg.wc >= b
}

// delivered counts a message for tg of size frame bytes, which holds
// mem bytes, handed to the host (or answered, or dropped).
func (c *conn) delivered(tg *target, size, mem int) {
	f := &c.flow
	if !tg.open {
		tg.open = true
		f.open = append(f.open, tg)
	}
	tg.wn++
	tg.wc += frameCharge(size)
	tg.wb += int64(mem)
	f.n++
	f.b += int64(mem)
	t := c.t
	if n, b := t.endpointCredit(); tg.wn >= max(1, n/grantFraction) || tg.wc >= max(1, b/grantFraction) {
		c.closeTarget(tg)
	}
	if f.n >= max(1, t.maxInFlight/flowWindow) || f.b >= max(1, t.maxInFlightB/flowWindow) {
		c.closeWindow()
	}
}

// closeTarget queues the mark of tg's open window.
func (c *conn) closeTarget(tg *target) {
	if tg.wn == 0 {
		return
	}
	c.flush() // the mark goes behind the window's messages
	f := &c.flow
	w := &markedWindow{c: c, tg: tg, n: tg.wn, credit: tg.wc, b: tg.wb}
	tg.inflight.Add(w.n)
	tg.inflightB.Add(w.credit)
	f.pending.Add(w.n)
	f.pendingB.Add(w.b)
	f.n -= w.n
	f.b -= w.b
	tg.wn, tg.wc, tg.wb = 0, 0, 0
	c.t.host.AfterProcessed(tg.pid, w.processed)
}

// closeWindow queues the marks of every open window.
func (c *conn) closeWindow() {
	c.flush()
	f := &c.flow
	for i, tg := range f.open {
		c.closeTarget(tg)
		tg.open = false
		f.open[i] = nil
	}
	f.open = f.open[:0]
}

// overBound reports whether the connection has as much delivered and not
// processed as it may.
func (c *conn) overBound() bool {
	f := &c.flow
	return f.pending.Load()+f.n >= c.t.maxInFlight || f.pendingB.Load()+f.b >= c.t.maxInFlightB
}

// awaitCredit stops reading until the connection is under its bound again,
// and reports false when the connection or the transport closed meanwhile
// (a handler that never returns must not keep the reader, and so the
// socket, from seeing the close).
func (c *conn) awaitCredit() bool {
	c.closeWindow()
	for c.overBound() {
		select {
		case <-c.flow.credit:
		case <-c.done:
			return false
		case <-c.t.done:
			return false
		}
	}
	return true
}
