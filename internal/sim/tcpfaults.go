// What the faults do to the simulated TCP network: kills, cuts,
// partitions, pauses, slowness and releases of what waited.

package sim

import (
	"slices"
	"strings"
	"time"
)

// tcpKill kills hosts' process: nothing leaves it any more, what is in
// flight on its connections is lost, its listeners close, its ends go dead
// (reads wait until the env closes them, writes go nowhere: the process
// sees nothing of its own kill), and every peer sees its connection reset
// after a delay.
func (w *World) tcpKill(hosts []*tcpHost) {
	n := w.tcp
	if n == nil || len(hosts) == 0 {
		return
	}
	var resets []*segment
	var ends []*tcpEnd
	n.mu.Lock()
	for _, h := range hosts {
		h.killed = true
	}
	for _, c := range n.connsOf(hosts, "") {
		for _, s := range n.cutLocked(c) {
			if to := s.to(); to != nil && !to.killed {
				resets = append(resets, s)
			}
		}
		for side, e := range c.ends {
			if e != nil && (side == 0 && c.dialer.killed || side == 1 && c.acceptor.killed) {
				ends = append(ends, e)
			}
		}
	}
	var lns []*tcpListener
	for _, l := range n.listeners {
		if l.h.killed {
			lns = append(lns, l)
		}
	}
	n.mu.Unlock()
	for _, e := range ends {
		e.mu.Lock()
		e.dead = true
		e.buf = nil
		e.mu.Unlock()
		signal(e.wake)
	}
	for _, l := range lns {
		l.Close()
	}
	for _, s := range resets {
		w.scheduleSegment(s)
	}
}

// tcpCut resets the connections between hosts and the host named to:
// what is in flight is lost and both ends see the reset.
func (w *World) tcpCut(hosts []*tcpHost, to string) {
	n := w.tcp
	if n == nil {
		return
	}
	var resets []*segment
	n.mu.Lock()
	for _, c := range n.connsOf(hosts, to) {
		resets = append(resets, n.cutLocked(c)...)
	}
	n.mu.Unlock()
	for _, s := range resets {
		w.scheduleSegment(s)
	}
}

// tcpHold partitions hosts from the host named to (on), or heals one
// partition (off).
func (w *World) tcpHold(hosts []*tcpHost, to string, on bool) {
	n := w.tcp
	if n == nil {
		return
	}
	n.mu.Lock()
	for _, h := range hosts {
		if on {
			n.holds[hostPair(h.name, to)]++
		} else {
			n.holds[hostPair(h.name, to)]--
		}
	}
	n.mu.Unlock()
}

// tcpPause stops (on) or continues hosts' process: nothing it sends or is
// sent moves.
func (w *World) tcpPause(hosts []*tcpHost, on bool) {
	if w.tcp == nil {
		return
	}
	w.tcp.mu.Lock()
	for _, h := range hosts {
		h.paused = on
	}
	w.tcp.mu.Unlock()
}

// tcpSlow makes every segment to or from hosts d slower.
func (w *World) tcpSlow(hosts []*tcpHost, d time.Duration) {
	if w.tcp == nil {
		return
	}
	w.tcp.mu.Lock()
	for _, h := range hosts {
		h.slow = d
	}
	w.tcp.mu.Unlock()
}

// tcpRelease delivers what waited on every direction that no longer
// waits, one segment a step per direction, from the next step on.
func (w *World) tcpRelease() {
	n := w.tcp
	if n == nil {
		return
	}
	type dirOf struct {
		c   *tcpConn
		dir int
	}
	var out []dirOf
	n.mu.Lock()
	for _, c := range n.conns {
		for dir := range 2 {
			if len(c.dirs[dir].held) > 0 && !n.blockedLocked(c, dir) {
				out = append(out, dirOf{c, dir})
			}
		}
	}
	n.mu.Unlock()
	slices.SortFunc(out, func(a, b dirOf) int {
		if c := strings.Compare(a.c.key, b.c.key); c != 0 {
			return c
		}
		return a.dir - b.dir
	})
	for _, d := range out {
		w.at(w.jitter(time.Microsecond, 50*time.Microsecond), "", func() { w.tcpDrain(d.c, d.dir) })
	}
}

// tcpDrain delivers the first segment that waited on a direction, and the
// next ones in later steps.
func (w *World) tcpDrain(c *tcpConn, dir int) {
	n := w.tcp
	n.mu.Lock()
	d := &c.dirs[dir]
	if len(d.held) == 0 || n.blockedLocked(c, dir) {
		n.mu.Unlock()
		return
	}
	s := d.held[0]
	d.held = d.held[1:]
	more := len(d.held) > 0
	stale := s.epoch != c.epoch
	n.mu.Unlock()
	if stale {
		w.stats.lost++
		w.trace.add("lost %s", s)
	} else {
		w.trace.add("release %s", s)
		n.deliverNow(s, true)
	}
	if more {
		w.at(w.jitter(time.Microsecond, 50*time.Microsecond), "", func() { w.tcpDrain(c, dir) })
	}
}

// tcpHalfOpen makes one of hosts' connections to the host named to
// half-open (tcprace.go): the one pick selects, among them in the order
// of their keys; three times in four, the chatty client's, which redials
// (an executor exits when its connection to the driver closes).
func (w *World) tcpHalfOpen(hosts []*tcpHost, to string, pick float64, hold time.Duration) {
	n := w.tcp
	if n == nil {
		return
	}
	n.mu.Lock()
	var live []*tcpConn
	for _, c := range n.connsOf(hosts, to) {
		if c.dialer != nil && slices.Contains(hosts, c.dialer) && !c.dirs[0].late && c.ends[0] != nil && !c.ends[0].isDone() {
			live = append(live, c)
		}
	}
	n.mu.Unlock()
	if len(live) == 0 {
		return
	}
	if pick < 0.75 {
		if i := slices.IndexFunc(live, func(c *tcpConn) bool { return strings.HasPrefix(c.dialer.name, "chat-") }); i >= 0 {
			live = live[i : i+1]
		}
	}
	c := live[int(pick*float64(len(live)))%len(live)]
	w.armHalfOpen(c, hold, w.jitter(time.Second, 4*time.Second))
}

// isDone reports whether the end was closed, reset or killed.
func (e *tcpEnd) isDone() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed || e.reset || e.eof || e.dead
}
