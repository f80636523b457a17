package netty

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

const (
	defaultMaxRetries = 16
	readBufferSize    = 64 << 10
	// dialAttempts bounds the dials of one outbox when the peer answers that
	// it is dialling us at the same time.
	dialAttempts = 3
	// cacheLimit bounds the per-connection caches of PIDs and message types.
	cacheLimit = 4096
	// futurePrefix starts the id of every reply future (sparkrpc's and
	// protoactor's): a message for such a target is a reply.
	futurePrefix = "future$"
)

// Stats are counters of a Transport.
type Stats struct {
	// Connections is the number of established connections.
	Connections int
	// ProtocolErrors counts connections closed because the peer sent bytes
	// that are not the protocol: garbage, a malformed or oversized frame, a
	// bad or silent handshake, a failed TLS handshake.
	ProtocolErrors int64
	// AuthFailures counts handshakes refused because a side failed to prove
	// the shared secret.
	AuthFailures int64
	// Handshaking is the number of accepted connections whose handshake
	// has not finished yet.
	Handshaking int
	// Refused counts connections refused because
	// spark.rpc.netty.maxPendingHandshakes were in handshake already.
	Refused int64
	// TimedOut counts connections closed because the peer went silent in
	// the middle of a frame, or with asks outstanding (see
	// ConnectionTimeoutError).
	TimedOut int64
}

// EncodeError is a message that could not be marshalled. A reply that cannot
// be marshalled fails its asker with an RpcFailure of code ENCODE instead.
type EncodeError struct {
	Type string
	Err  error
}

func (e *EncodeError) Error() string {
	return "netty: cannot encode message of type " + e.Type + ": " + e.Err.Error()
}

// Unwrap returns the marshalling error.
func (e *EncodeError) Unwrap() error { return e.Err }

// ErrTransportClosed is returned by Send after Shutdown.
var ErrTransportClosed = errors.New("netty: transport is shut down")

// ErrQueueFull matches a *QueueFullError.
var ErrQueueFull = errors.New("netty: outbound queue full")

// QueueFullError is returned by Send (and so fails an Ask at once) when the
// bytes queued for a peer and not yet written to its socket, with the new
// message, would exceed spark.rpc.io.maxQueuedBytesPerConnection: the peer
// reads slower than this env sends, or not at all. Nothing was queued.
type QueueFullError struct {
	Peer   string // the peer's identity
	Queued int64  // bytes queued for the peer
	Size   int64  // bytes of the refused message's frame
	Limit  int64  // the configured bound
}

func (e *QueueFullError) Error() string {
	return fmt.Sprintf("netty: cannot queue a message of %d bytes for %s: %d bytes already queued, over %s (%d bytes)",
		e.Size, e.Peer, e.Queued, KeyMaxQueuedBytes, e.Limit)
}

// Is reports whether target is ErrQueueFull.
func (e *QueueFullError) Is(target error) bool { return target == ErrQueueFull }

// Transport is the TCP implementation of actor.Transport. Create it with
// NewTransport and hand it to actor.NewEnv with actor.WithTransport, or use
// NewEnv. Its methods are safe for concurrent use.
type Transport struct {
	opts options

	host           actor.TransportHost
	log            zerolog.Logger
	info           actor.TransportInfo
	maxSize        int
	hs             handshakeConfig
	hsTimeout      time.Duration
	connectTimeout time.Duration
	writeTimeout   time.Duration // a peer that reads nothing for this long is dropped
	idleTimeout    time.Duration // a peer silent mid-frame or with asks outstanding is dropped
	idleTimeoutKey string        // the key that set idleTimeout
	maxHandshakes  int           // accepted connections in handshake at most
	maxQueued      int64         // bound of a peer's outbound bytes
	maxInFlight    int64         // bound of a connection's unprocessed messages
	maxInFlightB   int64         // bound of their bytes
	tlsServer      *tls.Config
	tlsClient      *tls.Config
	ln             net.Listener

	started atomic.Bool
	closing atomic.Bool
	done    chan struct{}

	mu    sync.Mutex
	peers sync.Map              // identity -> *peer
	raw   map[net.Conn]struct{} // every open socket, for Shutdown
	conns atomic.Int64          // attached connections
	wg    sync.WaitGroup

	protocolErrors atomic.Int64
	authFailures   atomic.Int64
	handshaking    atomic.Int64 // accepted connections in handshake
	refused        atomic.Int64
	refusedLogAt   atomic.Int64 // when the last refusal was logged (UnixNano)
	timeouts       atomic.Int64
}

// peer is the outbox of one peer identity: the frames waiting for its
// connection, in the order they were sent.
type peer struct {
	identity string
	client   bool // a client-mode peer: never dialled

	mu       sync.Mutex
	conn     *conn
	dialing  bool
	ready    chan struct{} // closed when a connection is attached
	out      outbuf        // encoded frames not yet taken by the writer
	writing  int           // bytes taken by a writer and not yet written
	unsent   []queued      // what buf holds while there is no connection
	sockAddr actor.RpcAddress
	removed  bool          // dropped from Transport.peers (client peers only)
	drained  chan struct{} // closed by the writer once out is empty (Shutdown's flush)
}

type queued struct {
	target, sender *protoactor.PID
	msg            proto.Message
}

// conn is one established (or handshaking) connection.
type conn struct {
	t        *Transport
	nc       net.Conn
	fr       *frameReader
	p        *peer
	outbound bool
	info     actor.Peer // as reported in events
	sig      chan struct{}
	done     chan struct{}
	readDone chan struct{} // closed when readLoop has returned, or cannot start
	reading  atomic.Bool   // readLoop started, or the connection closed first
	prev     *conn         // the connection c replaced: its reader stops first
	once     sync.Once
	quiet    atomic.Bool // closing it reports nothing
	attached atomic.Bool
	wrote    atomic.Bool // the writer wrote since the reader's last idle check
	spare    [][]byte
	iov      net.Buffers
	pids     map[string]*protoactor.PID
	types    map[string]protoreflect.MessageType
	flow     inflow
}

// inflow is the inbound flow control of a connection: the messages (and
// bytes) it delivered that the endpoints have not processed yet. The reader
// counts what it delivers in a window; it closes the window by queueing a
// mark behind those messages at every endpoint they went to
// (TransportHost.AfterProcessed), and when the marks of a window have all run, its
// messages are processed. Before each frame the reader checks the bound and,
// past it, stops reading until marks have run: TCP then pushes back on the
// sender. The cost is a few loads per frame and one mark per endpoint per
// window.
type inflow struct {
	pending  atomic.Int64  // messages of closed windows not yet processed
	pendingB atomic.Int64  // their bytes
	credit   chan struct{} // signalled when a window has been processed
	n, b     int64         // the open window (reader only)
	targets  []*protoactor.PID
}

// maxMarkTargets is how many endpoints one window may reach before it is
// closed.
const maxMarkTargets = 16

// flowWindow is the fraction of the bound after which a window is closed.
const flowWindow = 4

// markedWindow is a closed window waiting for its marks.
type markedWindow struct {
	c    *conn
	n, b int64
	left atomic.Int32
}

func (w *markedWindow) processed() {
	if w.left.Add(-1) != 0 {
		return
	}
	f := &w.c.flow
	f.pending.Add(-w.n)
	f.pendingB.Add(-w.b)
	select {
	case f.credit <- struct{}{}:
	default:
	}
}

// delivered counts a message of size bytes handed to the host for target.
func (c *conn) delivered(target *protoactor.PID, size int) {
	f := &c.flow
	if k := len(f.targets); k == 0 || (f.targets[k-1] != target && f.targets[k-1].Id != target.Id) {
		seen := false
		for _, p := range f.targets {
			if p.Id == target.Id {
				seen = true
				break
			}
		}
		if !seen {
			if len(f.targets) == maxMarkTargets {
				c.closeWindow()
			}
			f.targets = append(f.targets, target)
		}
	}
	f.n++
	f.b += int64(size)
	t := c.t
	if f.n >= max(1, t.maxInFlight/flowWindow) || f.b >= max(1, t.maxInFlightB/flowWindow) {
		c.closeWindow()
	}
}

// closeWindow queues the marks of the open window.
func (c *conn) closeWindow() {
	f := &c.flow
	if f.n == 0 {
		return
	}
	w := &markedWindow{c: c, n: f.n, b: f.b}
	w.left.Store(int32(len(f.targets))) //nolint:gosec // at most maxMarkTargets
	f.pending.Add(f.n)
	f.pendingB.Add(f.b)
	f.n, f.b = 0, 0
	for i, p := range f.targets {
		c.t.host.AfterProcessed(p, w.processed)
		f.targets[i] = nil
	}
	f.targets = f.targets[:0]
}

// overBound reports whether the connection has as much delivered and not
// processed as it may.
func (c *conn) overBound() bool {
	f := &c.flow
	return f.pending.Load()+f.n >= c.t.maxInFlight || f.pendingB.Load()+f.b >= c.t.maxInFlightB
}

// awaitCredit stops reading until the connection is under its bound again,
// and reports false when the connection or the transport closed meanwhile
// (a handler that never returns must not keep the reader, and so the
// socket, from seeing the close).
func (c *conn) awaitCredit() bool {
	c.closeWindow()
	for c.overBound() {
		select {
		case <-c.flow.credit:
		case <-c.done:
			return false
		case <-c.t.done:
			return false
		}
	}
	return true
}

// NewTransport returns a transport configured by opts. It reads the rest of
// its configuration (limits, authentication, TLS, port retries) from the
// env's Conf when the env starts it.
func NewTransport(opts ...Option) *Transport {
	t := &Transport{raw: make(map[net.Conn]struct{}), done: make(chan struct{})}
	for _, o := range opts {
		o.apply(&t.opts)
	}
	if t.opts.bindHost == "" {
		t.opts.bindHost = DefaultBindHost
	}
	return t
}

// Start implements actor.Transport: it reads the configuration and, unless
// in client mode, binds the listener.
func (t *Transport) Start(host actor.TransportHost) (actor.TransportInfo, error) {
	if !t.started.CompareAndSwap(false, true) {
		return actor.TransportInfo{}, errors.New("netty: transport already started")
	}
	t.host = host
	t.log = host.Logger()
	if t.opts.logger != nil {
		t.log = *t.opts.logger
	}
	t.log = t.log.With().Str("component", "netty").Logger()
	conf := host.Conf()
	var err error
	if t.maxSize, err = conf.MaxMessageSize(); err != nil {
		return actor.TransportInfo{}, err
	}
	if t.hsTimeout, err = conf.GetDuration(KeyAuthTimeout, "30s", time.Second); err != nil {
		return actor.TransportInfo{}, err
	}
	netTimeout := conf.Get(actor.KeyNetworkTimeout, "120s")
	if t.connectTimeout, err = conf.GetDuration(KeyConnectionCreationTimeout, netTimeout, time.Second); err != nil {
		return actor.TransportInfo{}, err
	}
	if t.writeTimeout, err = conf.GetDuration(KeyConnectionTimeout, netTimeout, time.Second); err != nil {
		return actor.TransportInfo{}, err
	}
	t.idleTimeout, t.idleTimeoutKey = t.writeTimeout, actor.KeyNetworkTimeout
	if _, ok := conf.Lookup(KeyConnectionTimeout); ok {
		t.idleTimeoutKey = KeyConnectionTimeout
	}
	if t.maxHandshakes, err = conf.GetInt(KeyMaxPendingHandshakes, defaultMaxPendingHandshakes); err != nil {
		return actor.TransportInfo{}, err
	}
	if t.maxHandshakes < 1 {
		return actor.TransportInfo{}, &actor.ConfError{Key: KeyMaxPendingHandshakes, Value: strconv.Itoa(t.maxHandshakes), Err: errors.New("must be at least 1")}
	}
	if t.maxQueued, err = positiveSize(conf, KeyMaxQueuedBytes, defaultMaxQueuedBytes); err != nil {
		return actor.TransportInfo{}, err
	}
	if t.maxInFlightB, err = positiveSize(conf, KeyMaxInFlightBytes, defaultMaxInFlightBytes); err != nil {
		return actor.TransportInfo{}, err
	}
	n, err := conf.GetInt(KeyMaxInFlightMessages, defaultMaxInFlightMessages)
	if err != nil {
		return actor.TransportInfo{}, err
	}
	if n < 1 {
		return actor.TransportInfo{}, &actor.ConfError{Key: KeyMaxInFlightMessages, Value: strconv.Itoa(n), Err: errors.New("must be at least 1")}
	}
	t.maxInFlight = int64(n)
	auth, err := conf.GetBool(KeyAuthenticate, false)
	if err != nil {
		return actor.TransportInfo{}, err
	}
	if auth {
		secret, ok := conf.Lookup(KeyAuthenticateSecret)
		if !ok || secret == "" {
			return actor.TransportInfo{}, fmt.Errorf("netty: %s is true but %s is not set", KeyAuthenticate, KeyAuthenticateSecret)
		}
		t.hs.secret = []byte(secret)
	}
	if t.tlsServer, t.tlsClient, err = tlsConfigs(conf); err != nil {
		return actor.TransportInfo{}, err
	}
	if t.opts.clientMode {
		var id [8]byte
		rand.Read(id[:]) //nolint:errcheck // never fails
		t.info = actor.TransportInfo{Identity: "client-" + hex.EncodeToString(id[:]), ClientMode: true}
		t.hs.identity, t.hs.clientMode = t.info.Identity, true
		return t.info, nil
	}
	if t.tlsServer != nil && len(t.tlsServer.Certificates) == 0 {
		return actor.TransportInfo{}, fmt.Errorf("netty: %s needs %s and %s on a server", KeySSLEnabled, KeySSLCertChain, KeySSLPrivateKey)
	}
	retries, err := conf.GetInt(KeyPortMaxRetries, defaultMaxRetries)
	if err != nil {
		return actor.TransportInfo{}, err
	}
	ln, err := listen(t.opts.bindHost, t.opts.port, retries)
	if err != nil {
		return actor.TransportInfo{}, err
	}
	t.ln = ln
	advertise := t.opts.advertiseHost
	if advertise == "" {
		advertise = t.opts.bindHost
		if ip := net.ParseIP(strings.Trim(advertise, "[]")); ip != nil && ip.IsUnspecified() {
			// Listening everywhere: advertise the machine's name.
			if h, err := os.Hostname(); err == nil && h != "" {
				advertise = h
			}
		}
	}
	addr := actor.NewRpcAddress(advertise, ln.Addr().(*net.TCPAddr).Port)
	t.info = actor.TransportInfo{Identity: addr.HostPort(), Address: addr}
	t.hs.identity = t.info.Identity
	t.wg.Add(1)
	go t.acceptLoop()
	t.log.Debug().Str("bind", ln.Addr().String()).Str("address", addr.HostPort()).Msg("listening")
	return t.info, nil
}

// listen binds host:port, trying port+1, port+2, ... up to retries times
// when the port is taken (Spark's Utils.startServiceOnPort). Port 0 binds a
// random port.
func listen(host string, port, retries int) (net.Listener, error) {
	var lastErr error
	for i := 0; i <= max(retries, 0); i++ {
		p := port
		if port != 0 {
			p = port + i
			if p > 65535 {
				break
			}
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(p)))
		if err == nil {
			return ln, nil
		}
		lastErr = err
		if port == 0 || !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
	}
	return nil, fmt.Errorf("netty: could not bind on %s port %d after %d retries (%s): %w",
		host, port, retries, KeyPortMaxRetries, lastErr)
}

// Info returns how the env is reachable (valid after Start).
func (t *Transport) Info() actor.TransportInfo { return t.info }

// Stats returns the transport's counters.
func (t *Transport) Stats() Stats {
	return Stats{
		Connections: int(t.conns.Load()), ProtocolErrors: t.protocolErrors.Load(), AuthFailures: t.authFailures.Load(),
		Handshaking: int(t.handshaking.Load()), Refused: t.refused.Load(), TimedOut: t.timeouts.Load(),
	}
}

// PeerAddress implements actor.Transport.
func (t *Transport) PeerAddress(identity string) actor.RpcAddress {
	if v, ok := t.peers.Load(identity); ok && v.(*peer).client {
		p := v.(*peer)
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.sockAddr
	}
	if a, err := actor.ParseHostPort(identity); err == nil {
		return a
	}
	return actor.RpcAddress{}
}

func isListenIdentity(id string) bool {
	_, err := actor.ParseHostPort(id)
	return err == nil
}

// Send implements actor.Transport: it marshals msg into the peer's outbox
// and returns; a writer goroutine per connection sends what accumulated in
// one write. A message over spark.rpc.message.maxSize or one that cannot be
// marshalled fails here; a reply (to a future) that fails so is replaced by
// an RpcFailure, so that the asker fails at once.
func (t *Transport) Send(target, sender *protoactor.PID, msg proto.Message) error {
	if t.closing.Load() {
		return ErrTransportClosed
	}
	p, err := t.peerFor(target.Address)
	if err != nil {
		return err
	}
	var sAddr, sID string
	if sender != nil {
		sAddr, sID = sender.Address, sender.Id
	}
	h, err := sizeEnvelope(target.Id, sAddr, sID, msg, t.maxSize)
	if err != nil {
		return t.sendFailed(target, sender, msg, h.size, err)
	}
	p.mu.Lock()
	c := p.conn
	if c == nil && p.client {
		p.mu.Unlock()
		return fmt.Errorf("netty: no connection to client-mode peer %s: %w", p.identity, actor.ErrConnectionClosed)
	}
	if q := int64(p.out.size + p.writing); q > 0 && q+int64(frameHeaderLen+h.size) > t.maxQueued {
		// The peer does not keep up: refuse rather than grow without bound
		// (a message is always taken when nothing is queued).
		p.mu.Unlock()
		return &QueueFullError{Peer: p.identity, Queued: q, Size: int64(frameHeaderLen + h.size), Limit: t.maxQueued}
	}
	wasEmpty := p.out.empty()
	dst := p.out.tail(frameHeaderLen + h.size)
	dst, err = writeEnvelope(dst, h, msg)
	p.out.setTail(dst)
	if err != nil {
		p.out.dropEmptyTail()
		p.mu.Unlock()
		return t.sendFailed(target, sender, msg, h.size, err)
	}
	if c == nil {
		p.unsent = append(p.unsent, queued{target, sender, msg})
		if !p.dialing {
			t.startDial(p)
		}
		p.mu.Unlock()
		return nil
	}
	p.mu.Unlock()
	if wasEmpty {
		select {
		case c.sig <- struct{}{}:
		default:
		}
	}
	return nil
}

// sendFailed turns a marshalling or size failure into the error Send
// returns; for a reply, the asker is failed with an RpcFailure instead.
func (t *Transport) sendFailed(target, sender *protoactor.PID, msg proto.Message, size int, err error) error {
	typ := "<nil>"
	if msg != nil {
		typ = string(msg.ProtoReflect().Descriptor().FullName())
	}
	var ferr error
	code := messages.ErrorCode_ERROR_CODE_ENCODE
	if err == errTooLarge {
		ferr = &actor.MessageTooLargeError{Size: size, Limit: t.maxSize}
		code = messages.ErrorCode_ERROR_CODE_TOO_LARGE
	} else {
		var ee *encodeError
		if errors.As(err, &ee) {
			err = ee.err
		}
		ferr = &EncodeError{Type: typ, Err: err}
	}
	if sender == nil && strings.HasPrefix(target.Id, futurePrefix) {
		f, isFailure := msg.(*messages.RpcFailure)
		if !isFailure {
			t.log.Warn().Err(ferr).Str("to", target.String()).Msg("reply cannot be sent; failing the asker")
			return t.Send(target, nil, &messages.RpcFailure{Code: code, Message: ferr.Error(), Type: fmt.Sprintf("%T", ferr)})
		}
		// A failure that cannot be sent as it is (text not valid UTF-8, or
		// too large): send it made valid and cut to fit, so that the asker
		// still fails at once. FitFailure returns f itself when it cannot
		// help, which ends the recursion.
		budget := t.maxSize - envelopeSize(target.Id, "", "", typ, 0) - binaryVarintLen
		if fitted := actor.FitFailure(f, budget); fitted != f {
			t.log.Warn().Err(ferr).Str("to", target.String()).Msg("failure reply cannot be sent as it is; sending it sanitized")
			return t.Send(target, nil, fitted)
		}
	}
	return ferr
}

// binaryVarintLen is the longest varint, the most a length prefix can take.
const binaryVarintLen = 10

func (t *Transport) peerFor(identity string) (*peer, error) {
	if v, ok := t.peers.Load(identity); ok {
		return v.(*peer), nil
	}
	if !isListenIdentity(identity) {
		return nil, fmt.Errorf("netty: no connection to client-mode peer %s: %w", identity, actor.ErrConnectionClosed)
	}
	v, _ := t.peers.LoadOrStore(identity, &peer{identity: identity})
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
		p.mu.Lock()
		ready := p.ready
		if p.conn != nil || ready == nil {
			p.mu.Unlock()
			err = nil
			break
		}
		p.mu.Unlock()
		timer := time.NewTimer(t.hsTimeout)
		select {
		case <-ready:
		case <-timer.C:
		case <-t.done:
		}
		timer.Stop()
		p.mu.Lock()
		attached := p.conn != nil
		p.mu.Unlock()
		if attached {
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
	p.mu.Unlock()
	if !t.closing.Load() {
		t.log.Warn().Err(err).Str("peer", p.identity).Int("messages", len(unsent)).Msg("connect failed; dropping queued messages")
	}
	cause := fmt.Errorf("netty: failed to connect to %s: %w", p.identity, err)
	for _, q := range unsent {
		t.host.Undeliverable(q.target, q.sender, q.msg, cause)
	}
}

// connect opens a connection to a listening peer and runs the dialer's
// handshake.
func (t *Transport) connect(p *peer) (*conn, error) {
	d := net.Dialer{Timeout: t.connectTimeout}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // Shutdown interrupts a connect in progress
		select {
		case <-t.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	nc, err := d.DialContext(ctx, "tcp", p.identity)
	if err != nil {
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
			return nil, fmt.Errorf("netty: TLS handshake with %s: %w", p.identity, err)
		}
		rw = tc
	}
	fr := newFrameReader(rw, readBufferSize)
	res, err := dialHandshake(fr, rw, t.hs)
	if err != nil {
		t.untrack(nc)
		if errors.Is(err, ErrAuthFailed) {
			t.authFailures.Add(1)
		}
		return nil, err
	}
	nc.SetDeadline(time.Time{}) //nolint:errcheck // best effort
	c := t.newConn(rw, fr, true)
	addr, _ := actor.ParseHostPort(res.identity)
	c.info = actor.Peer{Identity: p.identity, Address: addr}
	return c, nil
}

func (t *Transport) newConn(rw net.Conn, fr *frameReader, outbound bool) *conn {
	fr.max = t.maxSize
	return &conn{
		t: t, nc: rw, fr: fr, outbound: outbound,
		sig:      make(chan struct{}, 1),
		done:     make(chan struct{}),
		readDone: make(chan struct{}),
		pids:     make(map[string]*protoactor.PID),
		types:    make(map[string]protoreflect.MessageType),
		flow:     inflow{credit: make(chan struct{}, 1)},
	}
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

// testHookAttach, when set by a test, runs in attach once the peer is
// chosen, before the connection is installed.
var testHookAttach func(p *peer)

// attach makes c the connection of peer p (the peer named in c.info when p is
// nil). An inbound connection loses against one that this side dialled, or
// that it is dialling when its identity is the smaller one, so that two envs
// that dial each other at once end up with one connection; it replaces an
// older inbound connection from the same peer (the peer restarted or
// reconnected). It returns ErrDuplicateConnection when c lost.
func (t *Transport) attach(c *conn, p *peer) error {
	if t.closing.Load() {
		return ErrTransportClosed
	}
	if p == nil {
		// Keep the lock of a peer that is still in the map until the
		// connection is installed: the close of its current connection
		// could otherwise remove the peer in between, leaving c on a peer
		// that no Send finds.
		for {
			v, _ := t.peers.LoadOrStore(c.info.Identity, &peer{identity: c.info.Identity, client: !isListenIdentity(c.info.Identity)})
			p = v.(*peer)
			p.mu.Lock()
			if !p.removed {
				break
			}
			p.mu.Unlock() // a client peer that was just dropped: make a new one
		}
	} else {
		p.mu.Lock()
	}
	if testHookAttach != nil {
		testHookAttach(p)
	}
	var replaced *conn
	dup := false
	switch {
	case c.outbound:
		dup = p.conn != nil
	case p.conn != nil && p.conn.outbound:
		dup = true
	case p.conn != nil:
		replaced = p.conn
	case p.dialing && t.info.Identity < p.identity:
		dup = true
	}
	if dup {
		p.mu.Unlock()
		return fmt.Errorf("%w: a connection between %s and %s exists", ErrDuplicateConnection, t.info.Identity, p.identity)
	}
	c.p = p
	c.prev = replaced
	p.conn = c
	t.conns.Add(1)
	p.unsent = nil
	if c.info.Address.IsZero() || p.client {
		p.sockAddr = c.info.Address
	}
	if p.ready != nil {
		close(p.ready)
		p.ready = nil
	}
	pending := !p.out.empty()
	p.mu.Unlock()
	c.attached.Store(true)
	if pending {
		select {
		case c.sig <- struct{}{}:
		default:
		}
	}
	if replaced != nil {
		replaced.close(nil) // reports its Disconnected before c's Connected
	}
	return nil
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
		if t.handshaking.Add(1) > int64(t.maxHandshakes) {
			t.handshaking.Add(-1)
			t.refuseBusy(nc)
			continue
		}
		t.wg.Add(1)
		go t.serve(nc)
	}
}

// refusedLogInterval is the least time between two log lines about
// connections refused for spark.rpc.netty.maxPendingHandshakes.
const refusedLogInterval = 10 * time.Second

// refuseBusy closes an accepted connection at once because too many are in
// handshake. A plain-text dialer is told why (best effort: the write goes
// into an empty socket buffer and does not block).
func (t *Transport) refuseBusy(nc net.Conn) {
	n := t.refused.Add(1)
	if t.tlsServer == nil {
		nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))                                                     //nolint:errcheck // best effort
		sendFrame(nc, &messages.HandshakeReply{Version: ProtocolVersion, Identity: t.info.Identity, Error: reasonBusy}) //nolint:errcheck // best effort
	}
	remote := nc.RemoteAddr().String()
	nc.Close()
	now := time.Now().UnixNano()
	last := t.refusedLogAt.Load()
	if (last == 0 || now-last >= int64(refusedLogInterval)) && t.refusedLogAt.CompareAndSwap(last, now) {
		t.log.Warn().Str("remote", remote).Int64("refused", n).Int("limit", t.maxHandshakes).
			Msgf("refused a connection: %d connections are in handshake already (%s); refused %d so far", t.maxHandshakes, KeyMaxPendingHandshakes, n)
	}
}

// serve runs the acceptor's handshake on a new inbound connection.
func (t *Transport) serve(nc net.Conn) {
	defer t.wg.Done()
	defer t.handshaking.Add(-1)
	if !t.track(nc) {
		return
	}
	nc.SetDeadline(time.Now().Add(t.hsTimeout)) //nolint:errcheck // best effort
	rw := nc
	if t.tlsServer != nil {
		tc := tls.Server(nc, t.tlsServer)
		if err := tc.Handshake(); err != nil {
			t.untrack(nc)
			t.badConn(nc, fmt.Errorf("%w: TLS handshake: %v", ErrProtocol, err))
			return
		}
		rw = tc
	}
	fr := newFrameReader(rw, readBufferSize)
	c := t.newConn(rw, fr, false)
	_, err := acceptHandshake(fr, rw, t.hs, func(peer handshakeResult) error {
		c.info.Identity = peer.identity
		if peer.clientMode {
			c.info.Address = sockAddress(nc.RemoteAddr())
		} else {
			c.info.Address, _ = actor.ParseHostPort(peer.identity)
		}
		return t.attach(c, nil)
	})
	if err != nil {
		if c.attached.Load() {
			// The last handshake frame could not be written.
			c.quiet.Store(true)
			c.close(err)
			return
		}
		t.untrack(nc)
		switch {
		case errors.Is(err, ErrAuthFailed):
			t.authFailures.Add(1)
			t.log.Warn().Err(err).Str("remote", nc.RemoteAddr().String()).Msg("authentication failed")
		case errors.Is(err, ErrDuplicateConnection), errors.Is(err, ErrTransportClosed):
		case errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF):
			// Connected and closed without a byte: not an error.
		default:
			t.badConn(nc, err)
		}
		return
	}
	nc.SetDeadline(time.Time{}) //nolint:errcheck // best effort
	t.run(c)
}

func (t *Transport) badConn(nc net.Conn, err error) {
	t.protocolErrors.Add(1)
	t.log.Warn().Err(err).Str("remote", nc.RemoteAddr().String()).Msg("closed a connection that does not speak the protocol")
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
		p.mu.Lock()
		if p.conn == c {
			p.conn = nil
			lost = p.out.take(nil) // lost with the connection: reported below
			if p.client {
				// A client-mode peer is reachable only over its own
				// connections: forget it until it connects again.
				p.removed = true
				t.peers.CompareAndDelete(p.identity, p)
			}
		}
		p.mu.Unlock()
		t.conns.Add(-1)
		if errors.Is(cause, ErrProtocol) {
			t.protocolErrors.Add(1)
		}
		if len(lost) > 0 {
			c.dropFrames(lost, 0, cause)
			recycle(lost)
		}
		if c.quiet.Load() || t.closing.Load() {
			return
		}
		if errors.Is(cause, io.EOF) || errors.Is(cause, net.ErrClosed) || errors.Is(cause, syscall.ECONNRESET) {
			cause = nil
		}
		if cause != nil {
			t.log.Warn().Err(cause).Str("peer", c.info.Identity).Msg("connection failed")
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

// writeLoop sends what accumulates in the peer's outbox, one write per batch.
func (c *conn) writeLoop() {
	defer c.t.wg.Done()
	p := c.p
	for {
		select {
		case <-c.sig:
		case <-c.done:
			return
		}
		// Let the goroutines that are about to send run first, so that one
		// write carries more frames.
		runtime.Gosched()
		p.mu.Lock()
		if p.conn != c {
			p.mu.Unlock()
			return
		}
		size := p.out.size
		batch := p.out.take(c.spare)
		p.writing += size
		p.mu.Unlock()
		c.spare = nil
		if len(batch) == 0 {
			c.spare = batch
			c.notifyDrained(size)
			continue
		}
		// WriteTo consumes (and clears) the slice it is given: give it a copy
		// so that the chunks can be recycled.
		c.iov = append(c.iov[:0], batch...)
		var written int64
		err := c.nc.SetWriteDeadline(time.Now().Add(c.t.writeTimeout))
		if err == nil {
			written, err = c.iov.WriteTo(c.nc)
		}
		if err != nil {
			c.close(err)
			// What the socket did not take is lost: report it as the
			// frames still queued are.
			c.dropFrames(batch, written, err)
			recycle(batch)
			c.notifyDrained(size)
			return
		}
		recycle(batch)
		if !c.wrote.Load() {
			c.wrote.Store(true)
		}
		c.spare = batch[:0]
		c.notifyDrained(size)
	}
}

// notifyDrained accounts for the written bytes of a batch of n and tells a
// waiting Shutdown that everything queued was written.
func (c *conn) notifyDrained(n int) {
	p := c.p
	p.mu.Lock()
	p.writing -= n
	if p.drained != nil && p.out.empty() {
		close(p.drained)
		p.drained = nil
	}
	p.mu.Unlock()
}

// dropFrames reports every frame of chunks after the first skip bytes to the
// host as undeliverable, as a failed connect reports what was queued: the
// connection closed before they were written. An ask fails at once; a
// one-way message is counted as dropped and logged (rate-limited by the
// host). The frames are decoded for that; the chunks are not kept.
func (c *conn) dropFrames(chunks [][]byte, skip int64, cause error) {
	t := c.t
	p := c.p
	addr := c.info.Address.String()
	if c.info.Address.IsZero() {
		addr = p.identity
	}
	err := &actor.ConnectionClosedError{Addr: addr, Cause: cause}
	if cause == nil {
		err.Cause = errors.New("closed before the message was sent")
	}
	n := 0
	forEachFrame(chunks, skip, func(body []byte) {
		e, perr := parseEnvelope(body)
		if perr != nil {
			return // cannot happen: this side encoded it
		}
		target := &protoactor.PID{Address: p.identity, Id: string(e.target)}
		var sender *protoactor.PID
		if len(e.senderID) > 0 {
			sender = &protoactor.PID{Address: string(e.senderAddr), Id: string(e.senderID)}
		}
		msg, derr := decodeMessage(e.typ, e.payload)
		if derr != nil {
			msg = &messages.WireEnvelope{Target: target.Id, Type: string(e.typ)}
		}
		n++
		t.host.Undeliverable(target, sender, msg, err)
	})
	if n > 0 && !t.closing.Load() {
		t.log.Warn().Err(cause).Str("peer", p.identity).Int("messages", n).Msg("connection closed; dropping queued messages")
	}
}

// decodeMessage unmarshals a payload of the message type typ, without a
// connection's type cache.
func decodeMessage(typ, payload []byte) (proto.Message, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(typ))
	if err != nil {
		return nil, &errUnknownType{string(typ)}
	}
	msg := mt.New().Interface()
	if err := decodeOpts.Unmarshal(payload, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// flushTimeout bounds how long Shutdown waits for queued frames to be written.
const flushTimeout = 2 * time.Second

// flush waits until the writers have sent what was queued before Shutdown,
// at most until ctx ends or flushTimeout passes.
func (t *Transport) flush(ctx context.Context, peers []*peer) {
	var waits []chan struct{}
	for _, p := range peers {
		p.mu.Lock()
		c := p.conn
		if c == nil || p.out.empty() {
			p.mu.Unlock()
			continue
		}
		ch := make(chan struct{})
		p.drained = ch
		p.mu.Unlock()
		waits = append(waits, ch)
		select {
		case c.sig <- struct{}{}:
		default:
		}
	}
	if len(waits) == 0 {
		return
	}
	timer := time.NewTimer(flushTimeout)
	defer timer.Stop()
	for _, ch := range waits {
		select {
		case <-ch:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// readLoop delivers every frame until the connection fails. The reader of
// a connection that replaced another starts once the old reader has
// delivered what it had read and returned, so that a peer's messages keep
// their order across a reconnect.
func (c *conn) readLoop() {
	if !c.reading.CompareAndSwap(false, true) {
		return // closed before its reader started: close closed readDone
	}
	defer close(c.readDone)
	if prev := c.prev; prev != nil {
		c.prev = nil
		select {
		case <-prev.readDone:
		case <-c.done:
			return
		}
	}
	c.establishReader()
	// Once the connection is closed the reader only delivers what its
	// buffer still holds, without waiting for credit.
	flow := true
	for {
		if flow && c.overBound() && !c.awaitCredit() {
			flow = false
		}
		b, err := c.fr.next()
		if err != nil {
			c.close(err)
			return
		}
		if err := c.handle(b); err != nil {
			c.close(err)
			return
		}
	}
}

// handle decodes one envelope and hands it to the host.
func (c *conn) handle(b []byte) error {
	e, err := parseEnvelope(b)
	if err != nil {
		return err
	}
	t := c.t
	var msg proto.Message
	if len(e.senderID) == 0 && bytes.HasPrefix(e.target, []byte(futurePrefix)) {
		// A reply: route it to its ask without building (or caching) a
		// PID for a target that is used once.
		if msg, err = c.decode(e.typ, e.payload); err == nil && t.host.DeliverReply(e.target, msg) {
			return nil
		}
	}
	target := c.pids[string(e.target)]
	if target == nil {
		if len(c.pids) >= cacheLimit {
			clear(c.pids)
		}
		target = &protoactor.PID{Address: t.info.Identity, Id: string(e.target)}
		c.pids[target.Id] = target
	}
	var sender *protoactor.PID
	if len(e.senderID) > 0 {
		addr := c.info.Identity
		if len(e.senderAddr) > 0 && !bytes.Equal(e.senderAddr, []byte(addr)) {
			addr = string(e.senderAddr)
		}
		sender = &protoactor.PID{Address: addr, Id: string(e.senderID)}
	}
	if msg == nil {
		if msg, err = c.decode(e.typ, e.payload); err != nil {
			c.undecodable(target, sender, string(e.typ), err)
			return nil
		}
	}
	t.host.Deliver(target, sender, msg)
	c.delivered(target, len(b))
	return nil
}

// decodeOpts unmarshals into a new message: there is nothing to reset.
var decodeOpts = proto.UnmarshalOptions{Merge: true}

// errUnknownType marks a message type that is not in the protobuf registry.
type errUnknownType struct{ typ string }

func (e *errUnknownType) Error() string { return "unknown message type " + e.typ }

// decode unmarshals a payload of the message type typ.
func (c *conn) decode(typ, payload []byte) (proto.Message, error) {
	mt := c.types[string(typ)]
	if mt == nil {
		var err error
		mt, err = protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(typ))
		if err != nil {
			return nil, &errUnknownType{string(typ)}
		}
		if len(c.types) >= cacheLimit {
			clear(c.types)
		}
		c.types[string(typ)] = mt
	}
	msg := mt.New().Interface()
	if err := decodeOpts.Unmarshal(payload, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// undecodable fails the asker of a message that cannot be decoded: the
// remote asker of a request, or the local future a reply was for.
func (c *conn) undecodable(target, sender *protoactor.PID, typ string, err error) {
	t := c.t
	f := &messages.RpcFailure{
		Code:    messages.ErrorCode_ERROR_CODE_DECODE,
		Message: fmt.Sprintf("Cannot decode message of type %s for %s on %s: %v", typ, target.Id, t.info.Identity, err),
		Type:    "netty.DecodeError",
	}
	t.log.Warn().Str("type", typ).Str("to", target.Id).Err(err).Msg("cannot decode message")
	switch {
	case sender != nil:
		if serr := t.Send(sender, nil, f); serr != nil {
			t.log.Warn().Err(serr).Msg("cannot report a decode failure")
		}
	case strings.HasPrefix(target.Id, futurePrefix):
		t.host.Deliver(target, nil, f)
	}
}

// Shutdown implements actor.Transport: it closes the listener and every
// connection without reporting them, fails what is still queued, and waits
// for its goroutines or ctx.
func (t *Transport) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	if !t.closing.CompareAndSwap(false, true) {
		t.mu.Unlock()
		return nil
	}
	t.mu.Unlock()
	close(t.done)
	if t.ln != nil {
		t.ln.Close()
	}
	t.mu.Lock()
	raw := make([]net.Conn, 0, len(t.raw))
	for nc := range t.raw {
		raw = append(raw, nc)
	}
	t.mu.Unlock()
	var peers []*peer
	t.peers.Range(func(_, v any) bool {
		peers = append(peers, v.(*peer))
		return true
	})
	// Send what was queued before Shutdown (an executor's last status
	// updates, say) before the connections close.
	t.flush(ctx, peers)
	for _, nc := range raw {
		nc.Close()
	}
	for _, p := range peers {
		p.mu.Lock()
		unsent := p.unsent
		p.unsent = nil
		p.mu.Unlock()
		for _, q := range unsent {
			t.host.Undeliverable(q.target, q.sender, q.msg, actor.ErrEnvStopped)
		}
	}
	waited := make(chan struct{})
	go func() {
		t.wg.Wait()
		close(waited)
	}()
	select {
	case <-waited:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var _ actor.Transport = (*Transport)(nil)
