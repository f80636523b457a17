// Connection limits: handshakes and established connections, in total and per source address.

package netty

import (
	"errors"
	"net"
	"strconv"
	"sync/atomic"

	"github.com/sparkrpc/sparkrpc/actor"
)

// source counts the inbound connections from one source address (t.mu).
type source struct {
	handshaking int // accepted, handshake not finished
	established int // attached
}

// sourceOf is the source address that limits count by: the remote IP.
func sourceOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// limit is a refusal at accept: the bound reached, and where the refusal
// is counted and its log line rate-limited.
type limit struct {
	err     *LimitError
	counter *atomic.Int64
	log     *rateLog
}

// admit decides whether an accepted connection from src may start its
// handshake, and counts it as handshaking if so. The established-connection
// limits are checked once the handshake has named the peer (establish): a
// peer's reconnect at the limit replaces its own connection.
func (t *Transport) admit(src string) *limit {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sources[src]
	if s == nil {
		s = &source{}
	}
	busy := func(key string, v int) *limit {
		return &limit{err: &LimitError{Key: key, Limit: v, Source: src, Err: ErrTooManyHandshakes}, counter: &t.refused, log: &t.busyLog}
	}
	switch {
	case t.handshaking.Load() >= int64(t.maxHandshakes):
		return busy(KeyMaxPendingHandshakes, t.maxHandshakes)
	case s.handshaking >= t.maxHSPerAddr:
		return busy(KeyMaxPendingHandshakesPerAddress, t.maxHSPerAddr)
	}
	s.handshaking++
	t.sources[src] = s
	t.handshaking.Add(1)
	return nil
}

// handshakeDone ends the handshake of a connection that admit counted.
func (t *Transport) handshakeDone(src string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.handshaking.Add(-1)
	if s := t.sources[src]; s != nil {
		s.handshaking--
		t.dropSource(src, s)
	}
}

// establish counts an inbound connection from src as established, unless
// that would pass spark.rpc.netty.maxConnections or
// spark.rpc.netty.maxConnectionsPerAddress; a connection that replaces
// another of the same peer is always counted. p.mu is held.
func (t *Transport) establish(c *conn, replacing bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sources[c.src]
	if s == nil {
		s = &source{}
	}
	if !replacing {
		key, v := "", 0
		switch {
		case t.inbound >= t.maxConns:
			key, v = KeyMaxConnections, t.maxConns
		case s.established >= t.maxConnsPerAddr:
			key, v = KeyMaxConnectionsPerAddress, t.maxConnsPerAddr
		}
		if key != "" {
			return &LimitError{Key: key, Limit: v, Source: c.src, Err: ErrTooManyConnections}
		}
	}
	s.established++
	t.sources[c.src] = s
	t.inbound++
	c.counted = true
	return nil
}

// released uncounts a closed inbound connection that establish counted.
func (t *Transport) released(c *conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inbound--
	if s := t.sources[c.src]; s != nil {
		s.established--
		t.dropSource(c.src, s)
	}
}

func (t *Transport) dropSource(src string, s *source) {
	if s.handshaking <= 0 && s.established <= 0 {
		delete(t.sources, src)
	}
}

// LimitError is why an inbound connection was refused at one of the
// connection limits: Key names the limit, Limit its value, Source the
// address it was counted for.
type LimitError struct {
	Key    string
	Limit  int
	Source string
	Err    error // ErrTooManyConnections or ErrTooManyHandshakes
}

// Error is also the reason the dialer is told: it names the key.
func (e *LimitError) Error() string {
	r := reasonTooMany
	if errors.Is(e.Err, ErrTooManyHandshakes) {
		r = reasonBusy
	}
	return r + " (" + e.Key + ")"
}

// Unwrap returns the class of the refusal.
func (e *LimitError) Unwrap() error { return e.Err }

// readLimits reads the connection limits of the conf.
func (t *Transport) readLimits(conf *actor.Conf) error {
	for _, l := range []struct {
		key string
		def int
		dst *int
	}{
		{KeyMaxPendingHandshakes, defaultMaxPendingHandshakes, &t.maxHandshakes},
		{KeyMaxPendingHandshakesPerAddress, defaultMaxPendingHandshakesPerAddress, &t.maxHSPerAddr},
		{KeyMaxConnections, defaultMaxConnections, &t.maxConns},
		{KeyMaxConnectionsPerAddress, defaultMaxConnectionsPerAddress, &t.maxConnsPerAddr},
	} {
		n, err := conf.GetInt(l.key, l.def)
		if err != nil {
			return err
		}
		if n < 1 {
			return &actor.ConfError{Key: l.key, Value: strconv.Itoa(n), Err: errors.New("must be at least 1")}
		}
		*l.dst = n
	}
	return nil
}
