// Segments of the simulated TCP network: what an end writes in a step,
// cut at netty's frames, scheduled, held and delivered.

package sim

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"
)

// tcpDir is one direction of a connection.
type tcpDir struct {
	open    *segment   // the segment being written this step, not yet taken
	lastDue time.Time  // deliveries are never due before the previous one
	held    []*segment // waiting for a heal, a resume or a late close, in order
	late    bool       // half-open: held until its race or its bound
	// Where the stream is in its frames (split): the header bytes of the
	// next frame seen so far, and the bytes left of the current one.
	hdr  []byte
	left int
}

// segment is what one end wrote in one step: bytes, then maybe its close.
type segment struct {
	c       *tcpConn
	dir     int
	data    []byte
	fin     bool // the writer closed its end after the bytes
	rst     bool // the connection was reset
	connect bool // the dialer's connect
	epoch   int
}

// from and to name the hosts of a segment's direction.
func (s *segment) from() *tcpHost {
	if s.dir == 0 {
		return s.c.dialer
	}
	return s.c.acceptor
}

func (s *segment) to() *tcpHost {
	if s.dir == 0 {
		return s.c.acceptor
	}
	return s.c.dialer
}

func (s *segment) String() string {
	from, to := s.c.dialer.name, s.c.addr
	if s.dir == 1 {
		from, to = to, from
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tcp %s→%s", from, to)
	if s.dir == 0 {
		fmt.Fprintf(&b, " (:%d)", s.c.ends[0].local.Port)
	} else {
		fmt.Fprintf(&b, " (to :%d)", s.c.ends[0].local.Port)
	}
	switch {
	case s.connect:
		b.WriteString(" connect")
	case len(s.data) > 0:
		// Not its length: an ask's frame holds its reply-to id, which
		// counts the process's asks, so that a seed run twice in one
		// process writes frames of other lengths.
		b.WriteString(" data")
	}
	if s.fin {
		b.WriteString(" close")
	}
	if s.rst {
		b.WriteString(" reset")
	}
	return b.String()
}

// takePending returns what was written since the last call, in a
// canonical order: by connection, then direction.
func (n *tcpNet) takePending() []*segment {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	p := n.pending
	n.pending = nil
	for _, s := range p {
		if s.c.dirs[s.dir].open == s {
			s.c.dirs[s.dir].open = nil
		}
	}
	clear(n.fast)
	n.racing.Store(false)
	n.mu.Unlock()
	slices.SortStableFunc(p, func(a, b *segment) int {
		if c := strings.Compare(a.c.key, b.c.key); c != 0 {
			return c
		}
		return a.dir - b.dir
	})
	return p
}

// scheduleSegment splits s at the ends of netty's frames and schedules
// each piece. A stream may be cut anywhere; cut there, each frame arrives
// in a step of its own, as each message does on the in-memory network, so
// that two messages written at once (two LaunchTasks) do not wake two
// goroutines (two tasks) in one step.
func (w *World) scheduleSegment(s *segment) {
	w.tcp.mu.Lock()
	pieces := w.tcp.split(s)
	w.tcp.mu.Unlock()
	for _, p := range pieces {
		w.schedulePiece(p)
	}
}

// frameHeader is the length of netty's frame header: the frame's length,
// 4 bytes big-endian.
const frameHeader = 4

// split cuts s's bytes after each frame that ends in them; its close goes
// with the last piece. The network's lock is held.
func (n *tcpNet) split(s *segment) []*segment {
	if len(s.data) == 0 {
		return []*segment{s}
	}
	d := &s.c.dirs[s.dir]
	var out []*segment
	from := 0
	for i := 0; i < len(s.data); {
		if d.left == 0 {
			k := min(frameHeader-len(d.hdr), len(s.data)-i)
			d.hdr = append(d.hdr, s.data[i:i+k]...)
			i += k
			if len(d.hdr) < frameHeader {
				break
			}
			d.left = int(binary.BigEndian.Uint32(d.hdr))
			d.hdr = d.hdr[:0]
		}
		k := min(d.left, len(s.data)-i)
		i += k
		d.left -= k
		if d.left == 0 {
			out = append(out, &segment{c: s.c, dir: s.dir, data: s.data[from:i], epoch: s.epoch})
			from = i
		}
	}
	if from < len(s.data) || len(out) == 0 {
		out = append(out, &segment{c: s.c, dir: s.dir, data: s.data[from:], epoch: s.epoch})
	}
	out[len(out)-1].fin, out[len(out)-1].rst = s.fin, s.rst
	return out
}

// schedulePiece puts s on its direction, due after a delay drawn from the
// seed, never before the direction's previous segment. It runs on the
// loop.
func (w *World) schedulePiece(s *segment) {
	n := w.tcp
	w.stats.segments++
	d := w.jitter(w.cfg.minDelay, w.cfg.maxDelay)
	n.mu.Lock()
	if w.net.spikes > 0 { // the loop's own
		d += w.jitter(0, 300*time.Millisecond)
	}
	for _, h := range []*tcpHost{s.from(), s.to()} {
		if h != nil && h.slow > 0 {
			d += h.slow
			break
		}
	}
	due := dueAfter(&s.c.dirs[s.dir].lastDue, d)
	n.mu.Unlock()
	w.seq++
	heap.Push(&w.queue, &event{at: due, seq: w.seq, apply: func() { n.deliver(s) }})
}

// heldLocked reports whether s must wait: its hosts are partitioned, one
// of them is paused, its direction waits for a late close, or what came
// before it waits.
func (n *tcpNet) heldLocked(s *segment) bool {
	return len(s.c.dirs[s.dir].held) > 0 || n.blockedLocked(s.c, s.dir)
}

// blockedLocked reports whether a direction delivers nothing for now.
func (n *tcpNet) blockedLocked(c *tcpConn, dir int) bool {
	if c.dirs[dir].late {
		return true
	}
	if c.acceptor == nil {
		return false
	}
	return c.dialer.paused || c.acceptor.paused || n.holds[hostPair(c.dialer.name, c.acceptor.name)] > 0
}

func hostPair(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// deliver hands s to its end, holds it, or drops it; on the loop.
func (n *tcpNet) deliver(s *segment) {
	w := n.w
	n.mu.Lock()
	if s.epoch != s.c.epoch {
		n.mu.Unlock()
		w.stats.lost++
		w.trace.add("lost %s", s)
		return
	}
	if !s.connect && n.heldLocked(s) {
		d := &s.c.dirs[s.dir]
		d.held = append(d.held, s)
		n.mu.Unlock()
		w.trace.add("held %s", s)
		return
	}
	race := n.raceFor(s)
	n.mu.Unlock()
	if race != nil {
		w.runHalfOpenRace(race, s)
		return
	}
	n.deliverNow(s, true)
}

// deliverNow hands s to its end. onLoop says it runs on the world's loop
// (else in a race's step, from the goroutine that wrote it).
func (n *tcpNet) deliverNow(s *segment, onLoop bool) {
	w := n.w
	if s.connect {
		n.connect(s.c)
		return
	}
	c := s.c
	n.mu.Lock()
	end := c.ends[1-s.dir]
	to := s.to()
	if end == nil || to == nil || to.killed {
		n.mu.Unlock()
		if onLoop {
			w.stats.lost++
			w.trace.add("lost %s (no receiver)", s)
		}
		return
	}
	if len(s.data) > 0 {
		c.sent[s.dir]++
	}
	n.mu.Unlock()
	ok := end.receive(s)
	if !onLoop {
		w.trace.note("deliver at once %s", s)
		return
	}
	if ok {
		w.trace.add("deliver %s", s)
	} else {
		w.stats.lost++
		w.trace.add("lost %s (closed)", s)
	}
}

// deliverFast delivers a segment written during a race's step.
func (n *tcpNet) deliverFast(s *segment) {
	n.mu.Lock()
	n.split(s) // keeps the direction's place in its frames
	held := n.heldLocked(s)
	if held {
		d := &s.c.dirs[s.dir]
		d.held = append(d.held, s)
	}
	n.mu.Unlock()
	if !held {
		n.deliverNow(s, false)
	}
}
