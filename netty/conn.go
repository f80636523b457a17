// A connection: its type, the connection table (attach, replacement) and its close.

package netty

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
)

// conn is one established (or handshaking) connection.
type conn struct {
	t        *Transport
	nc       net.Conn
	fr       *frameReader
	p        *peer
	outbound bool
	keyID    string     // the key id the handshake authenticated with
	src      string     // inbound: the source address the limits count it for
	counted  bool       // inbound: counted as established (under p.mu, then read-only)
	info     actor.Peer // as reported in events
	sig      chan struct{}
	done     chan struct{}
	detached chan struct{} // closed once a closed attached connection has left its peer
	readDone chan struct{} // closed when readLoop has returned, or cannot start
	reading  atomic.Bool   // readLoop started, or the connection closed first
	prev     *conn         // the connection c replaced: its reader stops first
	once     sync.Once
	quiet    atomic.Bool // closing it reports nothing
	attached atomic.Bool
	wrote    atomic.Bool // the writer wrote since the reader's last idle check
	spare    [][]byte
	iov      net.Buffers // the batch being written; WriteTo consumes it
	iovBuf   net.Buffers // iov's backing array, kept across batches
	// The write side belongs to whoever set busy (under p.mu): the writer
	// or a Send writing inline. The fields below are theirs.
	busy bool
	// shut (under p.mu) says Shutdown has half-closed the connection:
	// nothing more is written on it.
	shut bool
	// established (under p.mu) says the handshake's last frame is written:
	// until then a Send queues, even on a quiet connection, for the writer
	// that starts after it (an acceptor attaches before its last frame).
	established   bool
	lastWrite     time.Time       // when the last write ended
	lastFrames    int             // and how many frames it held
	writeDeadline time.Time       // the connection's write deadline
	raw           syscall.RawConn // plaintext TCP: for writes that do not wait
	vectored      bool            // plaintext TCP: a batch goes in one vectored write (writeChunks)
	inlineWrite   func(fd uintptr) bool
	inlineBuf     []byte
	inlineN       int
	inlineErr     error
	inlineSpare   [][]byte
	// A batch an inline write could not finish, for the writer (under
	// p.mu): its size and the bytes already written.
	handoff     [][]byte
	handoffSize int
	handoffDone int64
	targets     map[string]*target
	lastTarget  *target // the target of the last frame delivered
	types       map[string]*messageType
	lastType    []byte       // the type name of the last frame decoded
	lastMT      *messageType // and its message type
	refs        []recvRef    // the references the peer defined (refs.go), by number less 1
	slabs       slabs        // the byte slab of decoded messages (slab.go)
	flow        inflow
	// Endpoint credit (credit.go): the reader has read the peer's accept,
	// so it holds the peer to this side's credit; grants says the peer
	// offered credit, so it takes grants.
	enforce bool
	grants  atomic.Bool
	// The reader's batch (batch.go): messages read for batchTo and not
	// yet posted.
	batch   []actor.Inbound
	batchTo *target
	// awaitedRead counts the asks and replies read since the reader last
	// handed on what it read and yielded (handOn).
	awaitedRead int
	// lent is the bytes of the chunks this connection's frames were read
	// into that are lent to borrowed messages and not released (lend.go).
	lent atomic.Int64

	offered bool // the reader has read the peer's offer: a second breaks the protocol
	// targetsCap is the size of targets past which the reader drops the
	// targets that hold nothing (targetOf).
	targetsCap int
}

func (t *Transport) newConn(rw net.Conn, fr *frameReader, outbound bool) *conn {
	fr.max = t.maxSize
	c := &conn{
		t: t, nc: rw, fr: fr, outbound: outbound,
		sig:      make(chan struct{}, 1),
		done:     make(chan struct{}),
		detached: make(chan struct{}),
		readDone: make(chan struct{}),
		targets:  make(map[string]*target),
		types:    make(map[string]*messageType),
		flow:     inflow{credit: make(chan struct{}, 1)},
		// A dialer's handshake is over before it attaches the connection.
		established: outbound,
	}
	// Plaintext TCP as the operating system gives it, and nothing else:
	// a Network's connection that wraps a *net.TCPConn (and so has its
	// SyscallConn) may change the bytes its Write writes, which a write
	// on the descriptor would go around.
	tc, isTCP := rw.(*net.TCPConn)
	c.vectored = isTCP
	if w := inlineWriter(c); w != nil && isTCP {
		if raw, err := tc.SyscallConn(); err == nil {
			c.raw = raw
			c.inlineWrite = w
		}
	}
	return c
}

func (t *Transport) track(nc net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing.Load() {
		nc.Close()
		return false
	}
	t.raw[nc] = struct{}{}
	return true
}

func (t *Transport) untrack(nc net.Conn) {
	t.mu.Lock()
	delete(t.raw, nc)
	t.mu.Unlock()
	nc.Close()
}

// attach makes c the connection of peer p (the peer named in c.info when p is
// nil). An inbound connection loses against one that this side dialled, or
// that it is dialling when its identity is the smaller one, so that two envs
// that dial each other at once end up with one connection. An identity
// cannot be taken over: a client-mode peer proved the key of its identity,
// so its new connection replaces its old one (it reconnected); a second
// inbound connection that claims a listening identity is kept only if the
// live one closes within spark.rpc.io.identityProbeTimeout (the peer
// restarted: the old connection's end is on its way), else it is refused
// with ErrIdentityInUse. A connection this side dialled reached whoever
// listens at the address, so it replaces an inbound one that claimed that
// address meanwhile. It returns ErrDuplicateConnection when c lost.
func (t *Transport) attach(c *conn, p *peer) error {
	timer := time.NewTimer(t.probeTimeout)
	defer timer.Stop()
	for {
		err := t.attachOnce(c, p)
		var busy *identityBusy
		if !errors.As(err, &busy) {
			return err
		}
		// Wait for the live connection to close and leave its peer; then
		// the claim is the peer's new connection (unless yet another
		// connection took the identity meanwhile: wait for that one too).
		select {
		case <-busy.live.detached:
		case <-timer.C:
			if busy.dup {
				return fmt.Errorf("%w: a connection between %s and %s exists", ErrDuplicateConnection, t.info.Identity, busy.live.info.Identity)
			}
			return ErrIdentityInUse
		case <-t.done:
			return ErrTransportClosed
		}
	}
}

// identityBusy is attachOnce's answer when a live connection holds the
// listening identity that an inbound connection claims; dup says that the
// live connection is one this side dialled, so that the inbound one is
// refused as a duplicate (not ErrIdentityInUse) if the live one stays.
type identityBusy struct {
	live *conn
	dup  bool
}

func (e *identityBusy) Error() string { return ErrIdentityInUse.Error() }

// attachOnce makes c the connection of p, or for an inbound connection (p
// nil) of the peer of c's identity. It fails when the transport closes,
// when p left the map, when the peer's connection stays
// (ErrDuplicateConnection, or an *identityBusy, after which attach calls
// it again) or when an inbound connection limit refuses c (establish).
func (t *Transport) attachOnce(c *conn, p *peer) error {
	if t.closing.Load() {
		return ErrTransportClosed
	}
	// Keep the lock of the peer until the connection is installed: the
	// close of its current connection could otherwise remove the peer in
	// between, leaving c on a peer that no Send finds.
	inbound := p == nil
	p, err := t.lockPeer(c, p)
	if err != nil {
		return err
	}
	if t.hooks.attach != nil {
		t.hooks.attach(p)
	}
	replaced, err := t.replacing(c, p)
	if err == nil && !c.outbound {
		err = t.establish(c, replaced != nil)
	}
	if err != nil {
		p.mu.Unlock()
		if inbound {
			// lockPeer may have made p for c: a refused connection
			// leaves no peer behind.
			t.dropIfUnused(p)
		}
		return err
	}
	c.p = p
	c.prev = replaced
	p.conn = c
	t.conns.Add(1)
	p.unsent = nil
	p.restart()
	if c.outbound {
		c.offerCredit(p) // the acceptor offers once it has read this
	}
	p.connected()
	if c.info.Address.IsZero() || p.client {
		p.sockAddr = c.info.Address
	}
	if p.ready != nil {
		close(p.ready)
		p.ready = nil
	}
	p.mu.Unlock()
	c.attached.Store(true)
	select { // the offer at least is queued
	case c.sig <- struct{}{}:
	default:
	}
	if replaced != nil {
		replaced.close(nil) // reports its Disconnected before c's Connected
	}
	return nil
}

// lockPeer returns, locked, the peer that c attaches to: p, or for an
// inbound connection (p nil) the peer of c's identity, made if the map has
// none. It fails when p, dialled by this side, left the map meanwhile.
func (t *Transport) lockPeer(c *conn, p *peer) (*peer, error) {
	if p != nil {
		p.mu.Lock()
		if p.removed {
			// An inbound connection from the peer was attached while this
			// side dialled, and has closed since: the peer is no longer
			// in the map, and the next Send dials again.
			p.mu.Unlock()
			return nil, fmt.Errorf("%w: %s connected and disconnected meanwhile", ErrDuplicateConnection, p.identity)
		}
		return p, nil
	}
	for {
		v, _ := t.peers.LoadOrStore(c.info.Identity, t.newPeer(c.info.Identity, !isListenIdentity(c.info.Identity)))
		p = v.(*peer)
		p.mu.Lock()
		if !p.removed {
			return p, nil
		}
		p.mu.Unlock() // a client peer that was just dropped: make a new one
	}
}

// replacing decides, under p.mu, what becomes of p's current connection
// when c attaches to p: it returns the connection that c replaces (nil if
// none), or why c may not attach: an *identityBusy, or
// ErrDuplicateConnection when the connection that stays is another one.
func (t *Transport) replacing(c *conn, p *peer) (*conn, error) {
	var replaced *conn
	dup := false
	switch {
	case c.outbound && p.conn != nil && !p.conn.outbound && !p.client:
		// Attached while this side dialled, the inbound connection only
		// claims the address that c reached.
		replaced = p.conn
	case c.outbound:
		dup = p.conn != nil
	case p.conn != nil && p.conn.outbound:
		// The peer dials although this side has a connection to it: it
		// crossed this side's dial, or it has lost that connection and
		// this side has not noticed yet. Wait a moment for the
		// connection to close before refusing c as a duplicate: refused,
		// a peer that lost it would wait for a dial from this side that
		// may never come.
		return nil, &identityBusy{live: p.conn, dup: true}
	case p.conn != nil && !p.client:
		return nil, &identityBusy{live: p.conn}
	case p.conn != nil:
		replaced = p.conn // the client proved its key: it reconnected
	case p.dialing && !p.awaiting && t.info.Identity < p.identity:
		// Both dial at once: the smaller identity's dial wins. Not once
		// it was refused (the peer had a connection it has since found
		// closed): it then waits for this very connection.
		p.refusedPeer = true
		dup = true
	}
	if dup {
		return nil, fmt.Errorf("%w: a connection between %s and %s exists", ErrDuplicateConnection, t.info.Identity, p.identity)
	}
	return replaced, nil
}

// run reports an attached connection, then starts its writer and its
// reader: endpoints hear of the connection before its first message.
func (t *Transport) run(c *conn) {
	t.host.Connected(c.info)
	t.wg.Add(2)
	go c.writeLoop()
	go func() {
		defer t.wg.Done()
		c.readLoop()
	}()
}

// close closes the connection once; an attached connection is detached from
// its peer and, unless quiet or the transport is shutting down, reported.
func (c *conn) close(cause error) {
	c.once.Do(func() {
		close(c.done)
		if c.reading.CompareAndSwap(false, true) {
			close(c.readDone) // its reader will not start
		}
		t := c.t
		t.untrack(rawConn(c.nc))
		if !c.attached.Load() {
			return
		}
		p := c.p
		var lost [][]byte
		var held map[string]*targetCredit
		p.mu.Lock()
		if p.conn == c {
			held = p.credit.take()
			lost = p.out.take(nil) // lost with the connection: reported below
			p.detachLocked(t)
		}
		p.mu.Unlock()
		close(c.detached)
		t.conns.Add(-1)
		if c.counted {
			t.released(c)
		}
		if errors.Is(cause, ErrProtocol) {
			t.protocolErrors.Add(1)
		}
		if len(lost) > 0 {
			c.dropFrames(lost, 0, cause)
			recycle(lost)
		}
		c.dropHeld(held, cause)
		if c.quiet.Load() || t.closing.Load() {
			return
		}
		if errors.Is(cause, io.EOF) || errors.Is(cause, net.ErrClosed) || errors.Is(cause, syscall.ECONNRESET) {
			cause = nil
		}
		var idle *IdleTimeoutError
		if errors.As(cause, &idle) {
			// Nothing was lost: a normal disconnect.
			t.log.Debug().Str("peer", c.info.Identity).Msg(idle.Error())
			cause = nil
		}
		if cause != nil {
			switch {
			case !errors.Is(cause, ErrProtocol):
				t.log.Warn().Err(cause).Str("peer", c.info.Identity).Msg("connection failed")
			case t.protoLog.allow(): // a peer's every connection must not be a log line
				t.log.Warn().Err(cause).Str("peer", c.info.Identity).Int64("protocolErrors", t.protocolErrors.Load()).
					Msg("connection failed (protocol errors are logged at most every 10s; Stats.ProtocolErrors counts them all)")
			}
			t.host.NetworkError(c.info, cause)
		}
		t.host.Disconnected(c.info, cause)
	})
}

func rawConn(nc net.Conn) net.Conn {
	if tc, ok := nc.(*tls.Conn); ok {
		return tc.NetConn()
	}
	return nc
}

// detachLocked takes its connection from p (p.mu held) and p from the
// transport's map until it is used again: a client-mode peer is reachable
// only over its own connections, and a listening one is dialled again by
// the next Send, so the map holds only peers in use, however many come and
// go. Shutdown's flush then waits for nothing more of p's.
func (p *peer) detachLocked(t *Transport) {
	p.conn = nil
	p.endDrain()
	p.removed = true
	t.peers.CompareAndDelete(p.identity, p)
}
