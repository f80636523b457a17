// The dialling side: connecting to a listening peer for its outbox, and reconnecting.

package netty

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
)

func (t *Transport) peerFor(identity string) (*peer, error) {
	if v, ok := t.peers.Load(identity); ok {
		return v.(*peer), nil
	}
	if !isListenIdentity(identity) {
		return nil, fmt.Errorf("netty: no connection to client-mode peer %s: %w", identity, actor.ErrConnectionClosed)
	}
	v, _ := t.peers.LoadOrStore(identity, t.newPeer(identity, false))
	return v.(*peer), nil
}

// startDial starts the connect of p's outbox; p.mu is held.
func (t *Transport) startDial(p *peer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing.Load() {
		return // Shutdown fails what is queued
	}
	p.dialing = true
	p.refusedPeer = false
	p.ready = make(chan struct{})
	t.wg.Add(1)
	go t.dial(p)
}

// dial connects to a listening peer for its outbox and attaches the
// connection, or fails everything queued for the peer.
func (t *Transport) dial(p *peer) {
	defer t.wg.Done()
	var err error
	for attempt := 0; attempt < dialAttempts; attempt++ {
		var c *conn
		c, err = t.connect(p)
		if err == nil {
			if aerr := t.attach(c, p); aerr != nil {
				// A connection from the peer was attached meanwhile.
				c.quiet.Store(true)
				c.close(nil)
			} else {
				t.run(c)
			}
			break
		}
		if !errors.Is(err, ErrDuplicateConnection) {
			break
		}
		// Both sides dialled at once and the peer's dial wins: wait for it.
		if t.awaitCrossedDial(p) {
			err = nil
			break
		}
	}
	p.mu.Lock()
	p.dialing = false
	if p.conn != nil {
		p.mu.Unlock()
		return
	}
	if err == nil {
		// The connection this dial found closed again: what was queued
		// since needs a new one.
		if len(p.unsent) > 0 {
			t.startDial(p)
		}
		p.mu.Unlock()
		return
	}
	unsent := p.unsent
	p.unsent = nil
	p.out.reset()
	cause := t.connectFailed(p, err)
	p.mu.Unlock()
	if !t.closing.Load() {
		t.log.Warn().Err(err).Str("peer", p.identity).Int("messages", len(unsent)).Dur("backoff", cause.Backoff).
			Msg("connect failed; dropping queued messages")
	}
	for _, q := range unsent {
		t.host.Undeliverable(q.target, q.sender, q.msg, cause)
	}
}

// awaitCrossedDial is dial's wait after the peer refused its connection
// because the peer's own dial wins: it waits, up to the handshake timeout,
// for the peer's connection, which it accepts meanwhile (p.awaiting). It
// reports whether the dial is done: a connection is attached, or the
// dial's wait is over. It does not wait when this side had refused the
// peer's dial for its own, which the peer then refused in turn: the peer
// waits for this side's connection, so the caller dials again at once.
func (t *Transport) awaitCrossedDial(p *peer) bool {
	p.mu.Lock()
	ready := p.ready
	if p.conn != nil || ready == nil {
		p.mu.Unlock()
		return true
	}
	if p.refusedPeer {
		p.refusedPeer = false
		p.mu.Unlock()
		return false
	}
	p.awaiting = true
	p.mu.Unlock()
	timer := time.NewTimer(t.hsTimeout)
	select {
	case <-ready:
	case <-timer.C:
	case <-t.done:
	}
	timer.Stop()
	p.mu.Lock()
	p.awaiting = false
	attached := p.conn != nil
	p.mu.Unlock()
	return attached
}

// connect opens a connection to a listening peer and runs the dialer's
// handshake.
func (t *Transport) connect(p *peer) (*conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), t.connectTimeout)
	defer cancel()
	go func() { // Shutdown interrupts a connect in progress
		select {
		case <-t.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	nc, err := t.network().DialContext(ctx, "tcp", p.identity)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, &ConnectTimeoutError{Peer: p.identity, Duration: t.connectTimeout, Key: t.connectKey, Stage: "connect"}
		}
		return nil, err
	}
	if !t.track(nc) {
		return nil, ErrTransportClosed
	}
	nc.SetDeadline(time.Now().Add(t.hsTimeout)) //nolint:errcheck // best effort
	rw := nc
	if t.tlsClient != nil {
		cfg := t.tlsClient.Clone()
		if cfg.ServerName == "" {
			host, _, _ := net.SplitHostPort(p.identity)
			cfg.ServerName = strings.Trim(host, "[]")
		}
		tc := tls.Client(nc, cfg)
		if err := tc.Handshake(); err != nil {
			t.untrack(nc)
			t.hsFailures.Add(1)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, &ConnectTimeoutError{Peer: p.identity, Duration: t.hsTimeout, Key: KeyAuthTimeout, Stage: "TLS handshake"}
			}
			return nil, tlsDialError(p.identity, err)
		}
		rw = tc
	}
	fr := newFrameReader(rw, readBufferSize)
	res, err := dialHandshake(fr, rw, t.hs)
	if err != nil {
		t.untrack(nc)
		if t.tlsClient != nil && isRemoteCertAlert(err) {
			// TLS 1.3: the listener refuses this env's certificate after
			// the dialer's side of the TLS handshake has completed.
			err = tlsDialError(p.identity, err)
		}
		if errors.Is(err, ErrAuthFailed) {
			t.authFailures.Add(1)
		} else {
			t.hsFailures.Add(1)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, &ConnectTimeoutError{Peer: p.identity, Duration: t.hsTimeout, Key: KeyAuthTimeout, Stage: "handshake"}
		}
		if t.tlsClient == nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)) {
			// A TLS server closes on a plain-text hello without a word.
			err = fmt.Errorf("%w: %w (the peer closed the connection during the handshake: does it require TLS? %s is off here)", ErrProtocol, err, KeySSLEnabled)
		}
		return nil, err
	}
	nc.SetDeadline(time.Time{}) //nolint:errcheck // best effort
	c := t.newConn(rw, fr, true)
	c.keyID = res.keyID
	// The peer's address in network events is the one this env reached it
	// at, which its refs to the peer carry (Spark's socket address, whose
	// host string is the name dialled), not the one it advertises: an
	// executor that reached its driver at localhost:P recognises the driver
	// in OnDisconnected whatever host name the driver advertises.
	addr, _ := actor.ParseHostPort(p.identity)
	c.info = actor.Peer{Identity: p.identity, Address: addr}
	return c, nil
}

// connectFailed starts p's backoff window after a failed connect and
// returns the error that fails what was queued and, within the window, every
// Send to p. Once the peer has been idle past the window for
// spark.rpc.io.connectBackoffMax more, it leaves the map (its failures are
// forgotten). p.mu is held.
func (t *Transport) connectFailed(p *peer, err error) *ConnectError {
	p.failures++
	wait := backoffWindow(t.backoffInitial, t.backoffMax, p.failures, t.jitter.float64())
	p.connErr = &ConnectError{Peer: p.identity, Err: err, Backoff: wait}
	p.retryAt = time.Now().Add(wait)
	if t.closing.Load() {
		return p.connErr
	}
	if p.forget == nil {
		p.forget = time.AfterFunc(wait+t.backoffMax, func() { t.forgetIdle(p) })
	} else {
		p.forget.Reset(wait + t.backoffMax)
	}
	return p.connErr
}

// connected ends p's backoff: a connection to it was attached. p.mu is held.
func (p *peer) connected() {
	p.failures, p.connErr, p.retryAt = 0, nil, time.Time{}
	if p.forget != nil {
		p.forget.Stop()
	}
}

// forgetIdle drops p from the map when nothing uses it: no connection, no
// connect in progress, nothing queued, and its backoff window has passed.
func (t *Transport) forgetIdle(p *peer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil || p.dialing || len(p.unsent) > 0 || !p.out.empty() || time.Now().Before(p.retryAt) || p.removed {
		return
	}
	p.removed = true
	t.peers.CompareAndDelete(p.identity, p)
}
