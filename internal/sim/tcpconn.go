// A connection of the simulated TCP network: its two ends, which are
// net.Conns, and what they write.

package sim

import (
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"
)

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
	dead     bool   // its process was killed: nothing reaches it any more
	closed   bool   // closed here
	rdl, wdl time.Time
}

// Read implements net.Conn: it returns what the world has delivered, and
// waits on a channel (durably) while there is nothing. An end of a killed
// process waits until it is closed: its reader must not see the kill as a
// network event, racing the close of its env.
func (e *tcpEnd) Read(p []byte) (int, error) {
	for {
		e.mu.Lock()
		switch {
		case e.closed:
			e.mu.Unlock()
			return 0, opError("read", net.ErrClosed)
		case e.dead:
			e.mu.Unlock()
			<-e.wake
			continue
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
// in this step. It never waits (the simulated network has no window). What
// a killed process writes goes nowhere, and its writer is not told.
func (e *tcpEnd) Write(p []byte) (int, error) {
	e.mu.Lock()
	closed, dead, reset, dl := e.closed, e.dead, e.reset, e.wdl
	e.mu.Unlock()
	switch {
	case closed:
		return 0, opError("write", net.ErrClosed)
	case dead:
		return len(p), nil
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
