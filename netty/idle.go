// Read deadlines: closing connections stalled mid-frame or silent with asks outstanding.

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
// requests"). A connection idle with no ask outstanding stays open. The asks
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
	period   time.Duration
	deadline time.Time
	progress bool   // bytes arrived since the last check
	silent   int    // checks in a row without a byte received
	quiet    int    // checks in a row with nothing received or written and no new ask
	newest   uint64 // the newest pending ask at the last check
}

// newIdleReader returns the reader of c's established connection, or nil
// when the connection timeout is off.
func (t *Transport) newIdleReader(c *conn) *idleReader {
	if t.idleTimeout <= 0 {
		return nil
	}
	r := &idleReader{c: c, rw: c.nc, timeout: t.idleTimeout, key: t.idleTimeoutKey, period: max(t.idleTimeout/idleChecks, time.Millisecond)}
	r.deadline = time.Now().Add(r.period)
	r.rw.SetReadDeadline(r.deadline) //nolint:errcheck // a closed connection fails the read
	return r
}

func (r *idleReader) Read(p []byte) (int, error) {
	for {
		n, err := r.rw.Read(p)
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
	r.progress = false
	r.newest = newest
	checks := int((r.timeout + r.period - 1) / r.period)
	switch {
	case r.silent >= checks && r.c.fr.midFrame():
		return r.fail(false, 0)
	case r.quiet >= checks && outstanding > 0:
		return r.fail(true, outstanding)
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
