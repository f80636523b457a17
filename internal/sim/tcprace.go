// The half-open race: a connection whose close reaches the acceptor late,
// after the dialer has redialled, delivered in the step of the new
// connection's handshake.

package sim

import (
	"runtime"
	"sync/atomic"
	"time"
)

// halfOpen is a connection that the dialer saw reset while the acceptor
// still holds it, with what the dialer wrote before (and its close)
// waiting on the way. When the same dialer's next connection to the same
// address delivers its second segment (a client's proof: the acceptor
// attaches the connection, replacing the old one, when it has checked
// it), the world delivers the old connection's bytes and close in the
// same step, without waiting in between, and every byte either
// connection writes in that step arrives at once: the old connection's
// reader, its close and the new connection's handshake, attach and
// reader run against each other, as on a real network where the old
// bytes arrive just as the new connection is made. This is how a
// connection gets replaced while the old one still has frames (netty's
// replaced connection's late frames) and how the old connection's close
// can land while the new one attaches (netty's zombie peer).
//
// The close's window is narrow: so that it is reached, the old
// connection's close, once its reader has seen the end of the stream,
// waits (polling, for a bounded time) until the new connection's
// acceptor asks for its peer's address, which it does just before it
// attaches the connection, and then spins a number of times drawn from
// the seed, so that it reaches the peer's lock at a moment of the attach
// that the seed chooses.
// What happens after the race depends on the Go scheduler: the trace is
// deterministic up to it (Result.RaceHash).
type halfOpen struct {
	old      *tcpConn
	dialer   *tcpHost
	addr     string
	oldFirst bool // the old connection's bytes go first
	yields   int  // between the two deliveries
	spin     int  // the old connection's close spins this many times

	started  bool     // the race's step ran (under the network's lock)
	done     bool     // raced, or released without a race
	cur      *tcpConn // the new connection
	addrSeen atomic.Bool
	closed   atomic.Bool // the old connection's close went through its wait
}

// closePolls bounds the old close's wait for the new attach: it polls
// without yielding (the two run on two processors) for that many rounds,
// then yields between polls, closeYields times at most.
const (
	closePolls  = 1 << 16
	closeYields = 2000
)

var spinSink atomic.Uint64

// raceFor returns the armed race that s starts: s is the second data
// segment a dialer's new connection delivers to the address of a
// half-open connection of the same dialer. The network's lock is held.
func (n *tcpNet) raceFor(s *segment) *halfOpen {
	if s.dir != 0 || s.connect || len(s.data) == 0 || s.c.sent[0] != 1 || s.c.race != nil {
		return nil
	}
	for _, r := range n.races {
		if !r.done && r.dialer == s.c.dialer && r.addr == s.c.addr && r.old != s.c {
			r.done, r.started, r.cur = true, true, s.c
			s.c.race, r.old.race = r, r
			return r
		}
	}
	return nil
}

// runHalfOpenRace delivers s and the old connection's held bytes and
// close in one step.
func (w *World) runHalfOpenRace(r *halfOpen, s *segment) {
	n := w.tcp
	w.stats.halfOpenRaces++
	if w.trace.raced == "" {
		w.trace.raced = w.trace.Hash()
	}
	n.mu.Lock()
	d := &r.old.dirs[0]
	held := d.held
	d.held, d.late = nil, false
	n.fast[r.old], n.fast[s.c] = true, true
	n.racing.Store(true)
	n.mu.Unlock()
	w.trace.add("race: %d held segments of %s with %s, at once", len(held), r.old.key, s)
	release := func() {
		for _, h := range held {
			if h.epoch == r.old.epoch {
				n.deliverNow(h, true)
			}
		}
	}
	if r.oldFirst {
		release()
	} else {
		n.deliverNow(s, true)
	}
	for range r.yields {
		runtime.Gosched()
	}
	if r.oldFirst {
		n.deliverNow(s, true)
	} else {
		release()
	}
}

// lockReleased is every netty transport's peer lock release hook
// (netty.WithLockRelease): in a race's step it yields, so that a goroutine
// waiting to take the lock (the old connection's close) may take it
// between two steps of the goroutine that released it (the new
// connection's attach). Outside races, a step waits for every goroutine
// anyway, and it does nothing.
func (n *tcpNet) lockReleased() {
	if n.racing.Load() {
		runtime.Gosched()
	}
}

// preemptSpin is how long a goroutine that a race slows stays busy: some
// tens of microseconds of processor time, as one that the Go scheduler
// preempted, or that a busy machine slowed, would be.
const preemptSpin = 20_000

// preempted makes the calling goroutine act as one the Go scheduler has
// just preempted: it yields, then stays busy for preemptSpin.
func preempted() {
	runtime.Gosched()
	for range preemptSpin {
		spinSink.Add(1)
	}
}

// handedOn runs after a connection's reader has handed messages to an
// endpoint (tapInbox). In a race's step the reader yields and then stays
// busy for a while: the old connection's reader then delivers its backlog
// slowly enough that the new connection's handshake and attach complete
// meanwhile, and a new reader that did not wait for the old one would
// deliver the redialled client's newer messages in between (netty's late
// frames). Outside races it does nothing.
func (n *tcpNet) handedOn() {
	if n.racing.Load() {
		preempted()
	}
}

// addrAsked notes that the acceptor of a race's new connection asked for
// its peer's address.
func (c *tcpConn) addrAsked(e *tcpEnd) {
	n := c.dialer.n
	n.mu.Lock()
	r := c.race
	n.mu.Unlock()
	if r != nil && r.cur == c && e.side == 1 {
		r.addrSeen.Store(true)
	}
}

// racedClose runs when an end closes: the acceptor's end of a race's old
// connection waits for the new connection's attach, then spins.
func (c *tcpConn) racedClose(e *tcpEnd) {
	n := c.dialer.n
	n.mu.Lock()
	r := c.race
	n.mu.Unlock()
	if r == nil || r.old != c || e.side != 1 || r.closed.Swap(true) {
		return
	}
	for i := 0; i < closePolls && !r.addrSeen.Load(); i++ {
		spinSink.Add(1)
	}
	for i := 0; i < closeYields && !r.addrSeen.Load(); i++ {
		runtime.Gosched()
	}
	for range r.spin {
		spinSink.Add(1)
	}
}

// armHalfOpen makes c half-open: what its dialer writes from now on
// waits; after hold, the dialer's end is reset, and the race is armed
// until bound has passed, when the held bytes and close are delivered
// late, one a step.
func (w *World) armHalfOpen(c *tcpConn, hold, bound time.Duration) {
	n := w.tcp
	r := &halfOpen{old: c, dialer: c.dialer, addr: c.addr, oldFirst: w.rng.IntN(4) > 0, yields: w.rng.IntN(4),
		spin: w.rng.IntN(1 << w.rng.IntN(13))}
	n.mu.Lock()
	c.dirs[0].late = true
	n.mu.Unlock()
	w.at(hold, "half-open: "+c.key+" reset at its dialer", func() {
		n.mu.Lock()
		epoch := c.epoch
		n.races = append(n.races, r)
		n.mu.Unlock()
		n.deliverNow(&segment{c: c, dir: 1, rst: true, epoch: epoch}, true)
		w.at(bound, "", func() {
			n.mu.Lock()
			late := !r.done
			r.done = true
			c.dirs[0].late = false
			n.mu.Unlock()
			if late {
				w.trace.add("half-open: the close of %s arrives late, unraced", c.key)
				w.tcpDrain(c, 0)
			}
		})
	})
}
