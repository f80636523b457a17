// The listening side: the accept loop, the handshake limit and serving a new inbound connection.

package netty

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

func (t *Transport) acceptLoop() {
	defer t.wg.Done()
	for {
		nc, err := t.ln.Accept()
		if err != nil {
			if t.closing.Load() {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			t.log.Warn().Err(err).Msg("accept failed")
			time.Sleep(10 * time.Millisecond)
			continue
		}
		src := sourceOf(nc.RemoteAddr())
		if l := t.admit(src); l != nil {
			t.refuseAtAccept(nc, l)
			continue
		}
		t.wg.Add(1)
		go t.serve(nc, src)
	}
}

// refuseAtAccept closes an accepted connection at once because a limit is
// reached. A plain-text dialer is told why (best effort: the write goes into
// an empty socket buffer and does not block).
func (t *Transport) refuseAtAccept(nc net.Conn, l *limit) {
	n := l.counter.Add(1)
	if t.tlsServer == nil {
		nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))                                                        //nolint:errcheck // best effort
		sendFrame(nc, &messages.HandshakeReply{Version: ProtocolVersion, Identity: t.info.Identity, Error: l.err.Error()}) //nolint:errcheck // best effort
	}
	nc.Close()
	t.logRefusal(l.log, l.err, n)
}

// logRefusal logs a refusal at a limit, at most once per
// refusedLogInterval for each kind of limit.
func (t *Transport) logRefusal(log *rateLog, e *LimitError, refused int64) {
	if log.allow() {
		t.log.Warn().Str("remote", e.Source).Int64("refused", refused).Int("limit", e.Limit).
			Msgf("refused a connection: %s (%d) reached; refused %d so far", e.Key, e.Limit, refused)
	}
}

// serve runs the acceptor's handshake on a new inbound connection.
func (t *Transport) serve(nc net.Conn, src string) {
	defer t.wg.Done()
	defer t.handshakeDone(src)
	if !t.track(nc) {
		return
	}
	nc.SetDeadline(time.Now().Add(t.hsTimeout)) //nolint:errcheck // best effort
	rw := nc
	if t.tlsServer != nil {
		tc := tls.Server(nc, t.tlsServer)
		if err := tc.Handshake(); err != nil {
			t.untrack(nc)
			t.tlsAcceptFailed(nc, tlsAcceptError(err))
			return
		}
		rw = tc
	}
	fr := newFrameReader(rw, readBufferSize)
	c := t.newConn(rw, fr, false)
	c.src = src
	_, err := acceptHandshake(fr, rw, t.hs, func(peer handshakeResult) error {
		c.info.Identity, c.keyID = peer.identity, peer.keyID
		if peer.clientMode {
			c.info.Address = sockAddress(nc.RemoteAddr())
		} else {
			c.info.Address, _ = actor.ParseHostPort(peer.identity)
		}
		if err := t.attach(c, nil); err != nil {
			return err
		}
		if t.hooks.accepted != nil {
			t.hooks.accepted(c)
		}
		return nil
	})
	if err != nil {
		t.handshakeFailed(nc, c, err)
		return
	}
	nc.SetDeadline(time.Time{}) //nolint:errcheck // best effort
	c.p.mu.Lock()
	c.established = true
	c.p.mu.Unlock()
	t.run(c)
}

// handshakeFailed ends an inbound connection whose handshake failed with
// err: it counts the failure and logs it (rate-limited), or reports the
// connection closed when it was attached before the last frame failed.
func (t *Transport) handshakeFailed(nc net.Conn, c *conn, err error) {
	if c.attached.Load() {
		// The last handshake frame could not be written.
		c.quiet.Store(true)
		c.close(err)
		return
	}
	// Counted before the close, so that a peer that sees the
	// connection end finds the refusal in Stats.
	var refusedN int64
	switch {
	case errors.Is(err, ErrAuthFailed):
		t.authFailures.Add(1)
	case errors.Is(err, ErrTooManyConnections):
		refusedN = t.refusedConns.Add(1)
	case errors.Is(err, ErrIdentityInUse):
		refusedN = t.identityInUse.Add(1)
	}
	t.untrack(nc)
	switch {
	case errors.Is(err, ErrAuthFailed):
		if t.authLog.allow() { // a flood of failures must not flood the log
			t.log.Warn().Err(err).Str("remote", nc.RemoteAddr().String()).Int64("failures", t.authFailures.Load()).
				Msg("authentication failed (logged at most every 10s; Stats.AuthFailures counts them all)")
		}
	case errors.Is(err, ErrTooManyConnections):
		var le *LimitError
		errors.As(err, &le)
		t.logRefusal(&t.connsLog, le, refusedN)
	case errors.Is(err, ErrIdentityInUse):
		if t.inUseLog.allow() {
			t.log.Warn().Str("remote", nc.RemoteAddr().String()).Str("identity", c.info.Identity).Int64("refused", refusedN).
				Msgf("refused a connection that claims the identity of a live connection (it did not close within %s)", KeyIdentityProbeTimeout)
		}
	case errors.Is(err, ErrDuplicateConnection), errors.Is(err, ErrTransportClosed):
	case errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF):
		// Connected and closed without a byte: not an error.
	default:
		t.hsFailures.Add(1)
		t.badConn(nc, err)
	}
}

// tlsAcceptFailed counts and logs (rate-limited) an inbound connection
// whose TLS handshake failed with err (tlsAcceptError's): a refused client
// certificate is an authentication failure, anything else a connection that
// does not speak the protocol.
func (t *Transport) tlsAcceptFailed(nc net.Conn, err error) {
	if !errors.Is(err, ErrAuthFailed) {
		t.badConn(nc, err)
		return
	}
	n := t.authFailures.Add(1)
	if t.authLog.allow() {
		t.log.Warn().Err(err).Str("remote", nc.RemoteAddr().String()).Int64("failures", n).
			Msg("authentication failed (logged at most every 10s; Stats.AuthFailures counts them all)")
	}
}

func (t *Transport) badConn(nc net.Conn, err error) {
	n := t.protocolErrors.Add(1)
	if t.badLog.allow() { // a flood of bad sockets must not flood the log
		t.log.Warn().Err(err).Str("remote", nc.RemoteAddr().String()).Int64("protocolErrors", n).
			Msg("closed a connection that does not speak the protocol (logged at most every 10s; Stats.ProtocolErrors counts them all)")
	}
}

func sockAddress(a net.Addr) actor.RpcAddress {
	if ta, ok := a.(*net.TCPAddr); ok {
		return actor.NewRpcAddress(ta.IP.String(), ta.Port)
	}
	if r, err := actor.ParseHostPort(a.String()); err == nil {
		return r
	}
	return actor.RpcAddress{}
}
