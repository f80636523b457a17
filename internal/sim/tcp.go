// The simulated TCP network that netty runs on in a netty seed: listeners,
// connections whose bytes move when the world delivers them, and what the
// faults do to them.

package sim

import (
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// tcpNet is the simulated TCP network. A host (one netty transport's
// netty.Network) listens and dials on it; a connection's two ends are
// net.Conns whose reads block on channels, so that they block durably in
// the bubble. What an end writes between two idle points becomes one
// segment of its direction (so that how netty's writer happened to batch
// its frames makes no difference); the world schedules each segment with
// a delay drawn from the seed, never before the direction's previous one,
// and delivers it when its turn comes. Deadlines are timers on the
// bubble's clock.
type tcpNet struct {
	w *World

	mu        sync.Mutex
	hosts     map[string]*tcpHost
	listeners map[string]*tcpListener // by the address listened on
	conns     map[string]*tcpConn     // every connection, by key
	pending   []*segment              // written since the world last took them
	holds     map[[2]string]int       // partitions in force between two hosts
	races     []*halfOpen             // half-open connections that may race a redial
	fast      map[*tcpConn]bool       // connections that deliver at once until the next idle point

	// The netty side (nettyapp.go, nettycheck.go).
	envs      []*tapped
	names     map[string]string // env identity → host name
	renamer   *strings.Replacer
	taps      []tapRecord // sent and delivered since the last idle point
	flows     map[flowKey]*flow
	chatEvery time.Duration // the chatty clients' mean interval
	chatBurst int           // and their largest burst
}

// tcpHost is one netty transport's view of the network: its
// netty.Network. Its address is an IP of its own.
type tcpHost struct {
	n      *tcpNet
	name   string // the simulator's name for it: driver, exec-1-2, chat-3
	ip     net.IP
	port   int // its last ephemeral port
	killed bool
	paused bool
	slow   time.Duration
}

// tcpConn is one connection: its two ends and the state of its two
// directions (0: dialer to acceptor, 1: back).
type tcpConn struct {
	key      string // dialer:port→address, for a canonical order
	dialer   *tcpHost
	acceptor *tcpHost // once accepted
	addr     string
	ends     [2]*tcpEnd
	dirs     [2]tcpDir
	epoch    int        // bumped by a cut: segments of an older epoch are lost
	dialed   chan error // the connect's outcome, for DialContext
	gaveUp   bool       // the dialer stopped waiting, or the dial failed
	race     *halfOpen  // the half-open race this connection takes part in
	sent     [2]int     // segments of data delivered in each direction
}

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

func newTCPNet(w *World) *tcpNet {
	return &tcpNet{w: w, hosts: make(map[string]*tcpHost), listeners: make(map[string]*tcpListener),
		conns: make(map[string]*tcpConn), holds: make(map[[2]string]int), fast: make(map[*tcpConn]bool),
		names: make(map[string]string), flows: make(map[flowKey]*flow)}
}

// host returns the host named name, made on first use. Its IP derives
// from its name, so that it is the same whatever order hosts are made in.
func (n *tcpNet) host(name string) *tcpHost {
	n.mu.Lock()
	defer n.mu.Unlock()
	if h := n.hosts[name]; h != nil {
		return h
	}
	f := fnv.New32a()
	f.Write([]byte(name))
	v := f.Sum32()
	h := &tcpHost{n: n, name: name, ip: net.IPv4(10, byte(v>>16), byte(v>>8), byte(v|1)), port: 40000}
	n.hosts[name] = h
	return h
}

func opError(op string, err error) error { return &net.OpError{Op: op, Net: "tcp", Err: err} }

// errAddrInUse is a Listen on an address taken.
var errAddrInUse = syscall.EADDRINUSE

// Listen implements netty.Network.
func (h *tcpHost) Listen(network, address string) (net.Listener, error) {
	n := h.n
	_, ps, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port == 0 {
		return nil, fmt.Errorf("sim: listen on %s: a fixed port is needed", address)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if l := n.listeners[address]; l != nil && !l.closed {
		return nil, opError("listen", errAddrInUse)
	}
	l := &tcpListener{h: h, addr: &net.TCPAddr{IP: h.ip, Port: port}, key: address, wake: make(chan struct{}, 1)}
	n.listeners[address] = l
	return l, nil
}

// DialContext implements netty.Network: the connect is a segment like
// any other; the dial returns when the world delivers it.
func (h *tcpHost) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	n := h.n
	n.mu.Lock()
	if h.killed {
		n.mu.Unlock()
		return nil, opError("dial", net.ErrClosed)
	}
	h.port++
	c := &tcpConn{key: fmt.Sprintf("%s:%d→%s", h.name, h.port, address), dialer: h, addr: address, dialed: make(chan error, 1)}
	c.ends[0] = &tcpEnd{c: c, side: 0, local: &net.TCPAddr{IP: h.ip, Port: h.port}, wake: make(chan struct{}, 1)}
	n.conns[c.key] = c
	n.pending = append(n.pending, &segment{c: c, dir: 0, connect: true})
	n.mu.Unlock()
	n.w.wake()
	select {
	case err := <-c.dialed:
		if err != nil {
			return nil, err
		}
		return c.ends[0], nil
	case <-ctx.Done():
		n.mu.Lock()
		c.gaveUp = true
		n.mu.Unlock()
		return nil, opError("dial", ctx.Err())
	}
}

// tcpListener is a host's listener.
type tcpListener struct {
	h      *tcpHost
	addr   *net.TCPAddr
	key    string
	queue  []*tcpEnd // accepted, not yet taken (under the network's lock)
	closed bool
	wake   chan struct{}
}

// Accept implements net.Listener.
func (l *tcpListener) Accept() (net.Conn, error) {
	n := l.h.n
	for {
		n.mu.Lock()
		if l.closed {
			n.mu.Unlock()
			return nil, opError("accept", net.ErrClosed)
		}
		if len(l.queue) > 0 {
			e := l.queue[0]
			l.queue = l.queue[1:]
			n.mu.Unlock()
			return e, nil
		}
		n.mu.Unlock()
		<-l.wake
	}
}

// Close implements net.Listener.
func (l *tcpListener) Close() error {
	n := l.h.n
	n.mu.Lock()
	l.closed = true
	if n.listeners[l.key] == l {
		delete(n.listeners, l.key)
	}
	queue := l.queue
	l.queue = nil
	n.mu.Unlock()
	signal(l.wake)
	for _, e := range queue {
		e.Close()
	}
	return nil
}

// Addr implements net.Listener.
func (l *tcpListener) Addr() net.Addr { return l.addr }

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// tcpEnd is one end of a connection: a net.Conn.
type tcpEnd struct {
	c             *tcpConn
	side          int // 0: the dialer's, 1: the acceptor's
	local, remote *net.TCPAddr
	wake          chan struct{}

	mu       sync.Mutex
	buf      []byte // received, not yet read
	eof      bool   // the peer's close arrived
	reset    bool   // the connection was reset
	closed   bool   // closed here
	rdl, wdl time.Time
}

// Read implements net.Conn: it returns what the world has delivered, and
// waits on a channel (durably) while there is nothing.
func (e *tcpEnd) Read(p []byte) (int, error) {
	for {
		e.mu.Lock()
		switch {
		case e.closed:
			e.mu.Unlock()
			return 0, opError("read", net.ErrClosed)
		case len(e.buf) > 0:
			k := copy(p, e.buf)
			e.buf = e.buf[k:]
			e.mu.Unlock()
			return k, nil
		case e.reset:
			e.mu.Unlock()
			return 0, opError("read", syscall.ECONNRESET)
		case e.eof:
			e.mu.Unlock()
			return 0, io.EOF
		}
		dl := e.rdl
		e.mu.Unlock()
		if dl.IsZero() {
			<-e.wake
			continue
		}
		d := time.Until(dl)
		if d <= 0 {
			return 0, opError("read", os.ErrDeadlineExceeded)
		}
		t := time.NewTimer(d)
		select {
		case <-e.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// Write implements net.Conn: the bytes join the segment this end writes
// in this step. It never waits (the simulated network has no window).
func (e *tcpEnd) Write(p []byte) (int, error) {
	e.mu.Lock()
	closed, reset, dl := e.closed, e.reset, e.wdl
	e.mu.Unlock()
	switch {
	case closed:
		return 0, opError("write", net.ErrClosed)
	case reset:
		return 0, opError("write", syscall.EPIPE)
	case !dl.IsZero() && !time.Now().Before(dl):
		return 0, opError("write", os.ErrDeadlineExceeded)
	}
	e.c.write(e.side, p, false)
	return len(p), nil
}

// Close implements net.Conn: reads and writes here fail from now on; the
// peer reads the end of the stream after what was written before.
func (e *tcpEnd) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	signal(e.wake)
	e.c.write(e.side, nil, true)
	e.c.racedClose(e)
	return nil
}

func (e *tcpEnd) LocalAddr() net.Addr { return e.local }

// RemoteAddr implements net.Conn. The acceptor of a connection in a
// half-open race asks for it just before it attaches the connection: the
// point the race lets the old connection's close go (tcprace.go).
func (e *tcpEnd) RemoteAddr() net.Addr {
	e.c.addrAsked(e)
	return e.remote
}

func (e *tcpEnd) SetDeadline(t time.Time) error {
	e.mu.Lock()
	e.rdl, e.wdl = t, t
	e.mu.Unlock()
	signal(e.wake)
	return nil
}

func (e *tcpEnd) SetReadDeadline(t time.Time) error {
	e.mu.Lock()
	e.rdl = t
	e.mu.Unlock()
	signal(e.wake)
	return nil
}

func (e *tcpEnd) SetWriteDeadline(t time.Time) error {
	e.mu.Lock()
	e.wdl = t
	e.mu.Unlock()
	return nil
}

// receive takes a segment's bytes and close at this end.
func (e *tcpEnd) receive(s *segment) bool {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return false
	}
	e.buf = append(e.buf, s.data...)
	e.eof = e.eof || s.fin
	e.reset = e.reset || s.rst
	e.mu.Unlock()
	signal(e.wake)
	return true
}

// write adds p (and the close, fin) to what side writes in this step, or
// delivers it at once while the connection is in a race's step.
func (c *tcpConn) write(side int, p []byte, fin bool) {
	n := c.dialer.n
	n.mu.Lock()
	h := c.dialer
	if side == 1 {
		h = c.acceptor
	}
	if h.killed {
		n.mu.Unlock()
		return // nothing leaves a dead process
	}
	if n.fast[c] {
		s := &segment{c: c, dir: side, data: slices.Clone(p), fin: fin, epoch: c.epoch}
		n.mu.Unlock()
		n.deliverFast(s)
		return
	}
	d := &c.dirs[side]
	if d.open == nil {
		d.open = &segment{c: c, dir: side, epoch: c.epoch}
		n.pending = append(n.pending, d.open)
	}
	d.open.data = append(d.open.data, p...)
	d.open.fin = d.open.fin || fin
	n.mu.Unlock()
	n.w.wake()
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
	dir := &s.c.dirs[s.dir]
	due := time.Now().Add(d)
	if !due.After(dir.lastDue) {
		due = dir.lastDue.Add(time.Nanosecond)
	}
	dir.lastDue = due
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

// connect runs a dial that reached its address: the listener accepts it,
// or the dial fails as refused.
func (n *tcpNet) connect(c *tcpConn) {
	w := n.w
	n.mu.Lock()
	l := n.listeners[c.addr]
	if c.gaveUp || c.dialer.killed {
		n.mu.Unlock()
		w.trace.add("connect %s abandoned", c.key)
		return
	}
	if l == nil || l.closed || l.h.killed {
		c.gaveUp = true // its dialer's end is never used
		n.mu.Unlock()
		w.trace.add("connect %s refused", c.key)
		c.dialed <- opError("dial", syscall.ECONNREFUSED)
		return
	}
	c.acceptor = l.h
	c.ends[0].remote = l.addr
	c.ends[1] = &tcpEnd{c: c, side: 1, local: l.addr, remote: c.ends[0].local, wake: make(chan struct{}, 1)}
	l.queue = append(l.queue, c.ends[1])
	n.mu.Unlock()
	w.trace.add("connect %s accepted", c.key)
	signal(l.wake)
	c.dialed <- nil
}

// connsOf returns the connections between one of hosts and the host named
// to (any host when to is empty), in the order of their keys.
func (n *tcpNet) connsOf(hosts []*tcpHost, to string) []*tcpConn {
	var out []*tcpConn
	for _, c := range n.conns {
		if c.acceptor == nil {
			continue
		}
		for _, h := range hosts {
			if (c.dialer == h && (to == "" || c.acceptor.name == to)) || (c.acceptor == h && (to == "" || c.dialer.name == to)) {
				out = append(out, c)
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b *tcpConn) int { return strings.Compare(a.key, b.key) })
	return out
}

// cutLocked resets c: what is in flight is lost, and each live end sees
// the reset after a delay. It returns the resets to schedule.
func (n *tcpNet) cutLocked(c *tcpConn) []*segment {
	c.epoch++
	var out []*segment
	for dir := range 2 {
		c.dirs[dir].held = nil
		c.dirs[dir].late = false
		out = append(out, &segment{c: c, dir: dir, rst: true, epoch: c.epoch})
	}
	return out
}
