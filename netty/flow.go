// Inbound flow control: what a connection delivered and its endpoints have not processed yet.

package netty

import (
	"sync/atomic"

	protoactor "github.com/asynkron/protoactor-go/actor"
)

// inflow is the inbound flow control of a connection: the messages (and
// bytes) it delivered that the endpoints have not processed yet. The reader
// counts what it delivers in a window; it closes the window by queueing a
// mark behind those messages at every endpoint they went to
// (TransportHost.AfterProcessed), and when the marks of a window have all run, its
// messages are processed. Before each frame the reader checks the bound and,
// past it, stops reading until marks have run: TCP then pushes back on the
// sender. The cost is a few loads per frame and one mark per endpoint per
// window.
type inflow struct {
	pending  atomic.Int64  // messages of closed windows not yet processed
	pendingB atomic.Int64  // their bytes
	credit   chan struct{} // signalled when a window has been processed
	n, b     int64         // the open window (reader only)
	targets  []*protoactor.PID
}

// maxMarkTargets is how many endpoints one window may reach before it is
// closed.
const maxMarkTargets = 16

// flowWindow is the fraction of the bound after which a window is closed.
const flowWindow = 4

// markedWindow is a closed window waiting for its marks.
type markedWindow struct {
	c    *conn
	n, b int64
	left atomic.Int32
}

func (w *markedWindow) processed() {
	if w.left.Add(-1) != 0 {
		return
	}
	f := &w.c.flow
	f.pending.Add(-w.n)
	f.pendingB.Add(-w.b)
	select {
	case f.credit <- struct{}{}:
	default:
	}
}

// delivered counts a message of size bytes handed to the host for target.
func (c *conn) delivered(target *protoactor.PID, size int) {
	f := &c.flow
	if k := len(f.targets); k == 0 || (f.targets[k-1] != target && f.targets[k-1].Id != target.Id) {
		seen := false
		for _, p := range f.targets {
			if p.Id == target.Id {
				seen = true
				break
			}
		}
		if !seen {
			if len(f.targets) == maxMarkTargets {
				c.closeWindow()
			}
			f.targets = append(f.targets, target)
		}
	}
	f.n++
	f.b += int64(size)
	t := c.t
	if f.n >= max(1, t.maxInFlight/flowWindow) || f.b >= max(1, t.maxInFlightB/flowWindow) {
		c.closeWindow()
	}
}

// closeWindow queues the marks of the open window.
func (c *conn) closeWindow() {
	c.flush() // the marks go behind the window's messages
	f := &c.flow
	if f.n == 0 {
		return
	}
	w := &markedWindow{c: c, n: f.n, b: f.b}
	w.left.Store(int32(len(f.targets))) //nolint:gosec // at most maxMarkTargets
	f.pending.Add(f.n)
	f.pendingB.Add(f.b)
	f.n, f.b = 0, 0
	for i, p := range f.targets {
		c.t.host.AfterProcessed(p, w.processed)
		f.targets[i] = nil
	}
	f.targets = f.targets[:0]
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
