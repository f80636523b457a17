// Read deadlines: closing connections stalled mid-frame, silent with asks outstanding, or idle.

package netty

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// idleChecks is how many times per connection timeout an established
// connection's reader wakes up to check on a silent peer: a silent
// connection is closed between one timeout and 1+1/idleChecks timeouts
// after its peer went quiet.
const idleChecks = 4

// ConnectionTimeoutError is why a connection was closed because its peer
// went silent for longer than Duration (spark.rpc.io.connectionTimeout, by
// default spark.network.timeout): in the middle of a frame, or while asks of
// this env were waiting for replies on it and no new ask was made (Spark's
// TransportChannelHandler: "quiet ... while there are outstanding
// requests"). A connection idle with no ask outstanding stays open (until
// spark.rpc.io.idleTimeout, see IdleTimeoutError). The asks
// pending on the connection fail with an *actor.ConnectionClosedError that
// wraps this error.
type ConnectionTimeoutError struct {
	// Peer is the peer's address (its socket address for a client-mode peer).
	Peer string
	// Duration is how long the peer was silent.
	Duration time.Duration
	// Key is the configuration key that set Timeout.
	Key string
	// MidFrame is true when the peer stopped in the middle of a frame.
	MidFrame bool
	// Outstanding is the number of asks that were waiting on the connection.
	Outstanding int
}

func (e *ConnectionTimeoutError) Error() string {
	if e.MidFrame {
		return fmt.Sprintf("netty: connection from %s stalled in the middle of a frame: nothing received for %s; closing it. This timeout is controlled by %s",
			e.Peer, e.Duration, e.Key)
	}
	return fmt.Sprintf("netty: connection to %s has been quiet for %s while there are %d outstanding requests; assuming the connection is dead. This timeout is controlled by %s",
		e.Peer, e.Duration, e.Outstanding, e.Key)
}

// Timeout reports true: the error is a timeout (net.Error).
func (e *ConnectionTimeoutError) Timeout() bool { return true }

// IdleTimeoutError is why a connection was closed for being idle: for
// Idle, nothing was received or written on it, no ask of this env waited
// on it and nothing it delivered waited to be processed
// (spark.rpc.io.idleTimeout); or, Silent, an inbound connection received
// nothing at all since its handshake (spark.rpc.io.connectionTimeout).
// Nothing is lost with such a connection: the close is reported as a
// normal disconnect, and the next Send to a listening peer dials again.
type IdleTimeoutError struct {
	// Peer is the peer's address (its socket address for a client-mode peer).
	Peer string
	// Idle is how long the connection was idle.
	Idle time.Duration
	// Key is the configuration key of the timeout.
	Key string
	// Silent is true for an inbound connection that never sent a frame.
	Silent bool
}

func (e *IdleTimeoutError) Error() string {
	if e.Silent {
		return fmt.Sprintf("netty: connection from %s sent nothing for %s after its handshake; closing it. This timeout is controlled by %s", e.Peer, e.Idle, e.Key)
	}
	return fmt.Sprintf("netty: connection with %s idle for %s; closing it. This timeout is controlled by %s", e.Peer, e.Idle, e.Key)
}

// Timeout reports true: the error is a timeout (net.Error).
func (e *IdleTimeoutError) Timeout() bool { return true }

// establishReader gives c's frame reader its full buffer and, unless the
// connection timeout is off, the read deadlines that close a silent
// connection. It runs once the handshake has succeeded.
func (c *conn) establishReader() {
	var src io.Reader = c.nc
	if r := c.t.newIdleReader(c); r != nil {
		src = r
	}
	if c.p != nil {
		src = &countingReader{r: src, n: &c.p.recvBytes}
	}
	c.fr.establish(src)
}

// idleReader is what an established connection's frame reader reads from.
// It keeps a read deadline a fraction of the connection timeout ahead and,
// each time it expires, checks on the peer: a read that is in the middle of
// a frame and got nothing for the whole timeout fails, and so does one while
// asks wait on the connection and for the whole timeout nothing was received
// or written and no ask was made (Netty's all-idle state and Spark's
// "overdue" check). Otherwise it reads on.
type idleReader struct {
	c        *conn
	rw       net.Conn // the connection (a *tls.Conn passes deadlines on)
	timeout  time.Duration
	key      string
	idle     time.Duration // spark.rpc.io.idleTimeout (0: off)
	start    time.Time     // when the connection was established
	since    time.Time     // when it was last seen active
	received bool          // a byte arrived since the handshake
	period   time.Duration
	deadline time.Time
	progress bool   // bytes arrived since the last check
	silent   int    // checks in a row without a byte received
	quiet    int    // checks in a row with nothing received or written and no new ask
	newest   uint64 // the newest pending ask at the last check
	// closing, once the connection was found idle and taken from its
	// peer, is the error the reader ends with: its write side is shut, and
	// it reads on until the peer, told by that, closes its own (or a
	// period passes), so that what the peer sent before it heard of the
	// close is delivered rather than lost in a reset.
	closing *IdleTimeoutError
}

// newIdleReader returns the reader of c's established connection, or nil
// when both the connection timeout and the idle timeout are off.
func (t *Transport) newIdleReader(c *conn) *idleReader {
	if t.idleTimeout <= 0 && t.idleConnTimeout <= 0 {
		return nil
	}
	shortest := t.idleTimeout
	if shortest <= 0 || (t.idleConnTimeout > 0 && t.idleConnTimeout < shortest) {
		shortest = t.idleConnTimeout
	}
	now := time.Now()
	r := &idleReader{c: c, rw: c.nc, timeout: t.idleTimeout, key: t.idleTimeoutKey, idle: t.idleConnTimeout,
		period: max(shortest/idleChecks, time.Millisecond), start: now, since: now}
	r.deadline = now.Add(r.period)
	r.rw.SetReadDeadline(r.deadline) //nolint:errcheck // a closed connection fails the read
	return r
}

func (r *idleReader) Read(p []byte) (int, error) {
	for {
		n, err := r.rw.Read(p)
		if r.closing != nil && n == 0 && err != nil {
			return 0, r.closing // the peer closed its side, or took too long to
		}
		if n > 0 {
			r.progress = true
			if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
				err = nil // the next read sees the deadline again
			}
			return n, err
		}
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
		if err := r.check(); err != nil {
			return 0, err
		}
	}
}

// check runs when the read deadline expired: it fails the read of a peer
// silent for too long, or moves the deadline on.
func (r *idleReader) check() error {
	now := time.Now()
	// A deadline that passed long before this read started says nothing
	// about the peer: the reader was busy delivering, not waiting.
	late := now.Sub(r.deadline) > r.period/2
	outstanding, newest := r.c.t.host.PendingAsks(r.c.info.Identity)
	wrote := r.c.wrote.Swap(false)
	switch {
	case r.progress || late:
		r.silent, r.quiet = 0, 0
	case wrote || newest != r.newest:
		r.silent++
		r.quiet = 0
	default:
		r.silent++
		r.quiet++
	}
	f := &r.c.flow
	if f.n > 0 {
		// What the open window delivered is processed when its marks
		// have run: count it as pending from now on.
		r.c.closeWindow()
		r.since = now
	}
	if r.progress || late || wrote || newest != r.newest || outstanding > 0 || f.pending.Load() > 0 || r.c.sending() {
		r.since = now
	}
	r.received = r.received || r.progress
	r.progress = false
	r.newest = newest
	if r.timeout > 0 {
		checks := int((r.timeout + r.period - 1) / r.period)
		switch {
		case r.silent >= checks && r.c.fr.midFrame():
			return r.fail(false, 0)
		case r.quiet >= checks && outstanding > 0:
			return r.fail(true, outstanding)
		case !r.c.outbound && !r.received && now.Sub(r.start) >= r.timeout:
			return r.idleFail(now.Sub(r.start), r.key, true)
		}
	}
	if r.idle > 0 && now.Sub(r.since) >= r.idle {
		if r.c.detachIdle() {
			err := r.idleFail(now.Sub(r.since), KeyIdleTimeout, false)
			// Closing the socket outright would reset it, and the reset
			// discards what the peer sent before it heard of the close:
			// shut the write side instead, and read on until the peer
			// closes its own.
			if hc, ok := r.c.nc.(interface{ CloseWrite() error }); ok && hc.CloseWrite() == nil {
				r.closing = err.(*IdleTimeoutError)
				return r.rw.SetReadDeadline(now.Add(r.period))
			}
			return err
		}
		r.since = now // something was queued for it since sending looked
	}
	r.deadline = now.Add(r.period)
	return r.rw.SetReadDeadline(r.deadline)
}

func (r *idleReader) fail(idle bool, outstanding int) error {
	r.c.t.timeouts.Add(1)
	peer := r.c.info.Identity
	if !r.c.info.Address.IsZero() {
		peer = r.c.info.Address.HostPort()
	}
	return &ConnectionTimeoutError{Peer: peer, Duration: r.timeout, Key: r.key, MidFrame: !idle, Outstanding: outstanding}
}

func (r *idleReader) idleFail(d time.Duration, key string, silent bool) error {
	r.c.t.idleClosed.Add(1)
	peer := r.c.info.Identity
	if !r.c.info.Address.IsZero() {
		peer = r.c.info.Address.HostPort()
	}
	return &IdleTimeoutError{Peer: peer, Idle: d.Round(time.Millisecond), Key: key, Silent: silent}
}

// sending reports whether frames are queued for c's peer or being written.
func (c *conn) sending() bool {
	p := c.p
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn == c && c.sendingLocked()
}

// sendingLocked is sending for c, its peer's connection (p.mu held).
func (c *conn) sendingLocked() bool {
	p := c.p
	return !p.out.empty() || p.writing > 0 || c.busy || p.credit.heldB > 0
}

// detachIdle takes c, found idle, from its peer, so that a Send from now on
// dials a new connection rather than queue a frame that c's close would
// drop; it reports false, and leaves c, when something was queued for c
// since sending looked. The check and the detach are one step under the
// peer's lock.
func (c *conn) detachIdle() bool {
	p := c.p
	if p == nil {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != c {
		return true
	}
	if c.sendingLocked() {
		return false
	}
	p.detachLocked(c.t)
	return true
}
