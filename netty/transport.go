// The TCP Transport: its type, configuration at Start, and the listener it binds.

package netty

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
)

const (
	defaultMaxRetries = 16
	readBufferSize    = 64 << 10
	// dialAttempts bounds the dials of one outbox when the peer answers that
	// it is dialling us at the same time.
	dialAttempts = 3
	// cacheLimit bounds the per-connection caches of targets and message types.
	cacheLimit = 4096
	// futurePrefix starts the id of every reply future (sparkrpc's and
	// protoactor's): a message for such a target is a reply.
	futurePrefix = "future$"
)

// Transport is the TCP implementation of actor.Transport. Create it with
// NewTransport and hand it to actor.NewEnv with actor.WithTransport, or use
// NewEnv. Its methods are safe for concurrent use.
type Transport struct {
	opts   options
	jitter jitterSource // the backoff's: WithRand's source

	host            actor.TransportHost
	log             zerolog.Logger
	info            actor.TransportInfo
	maxSize         int
	hs              handshakeConfig
	hsTimeout       time.Duration
	connectTimeout  time.Duration
	connectKey      string           // the key that set connectTimeout
	writeTimeout    time.Duration    // a peer that reads nothing for this long is dropped
	idleTimeout     time.Duration    // a peer silent mid-frame or with asks outstanding is dropped
	idleTimeoutKey  string           // the key that set idleTimeout
	maxHandshakes   int              // accepted connections in handshake at most
	maxHSPerAddr    int              // and from one source address
	maxConns        int              // established inbound connections at most
	maxConnsPerAddr int              // and from one source address
	idleConnTimeout time.Duration    // an idle connection is closed after this long
	backoffInitial  time.Duration    // first reconnect backoff window
	backoffMax      time.Duration    // its cap
	maxQueued       int64            // bound of a peer's outbound bytes
	maxInFlight     int64            // bound of a connection's unprocessed messages
	maxInFlightB    int64            // bound of their bytes
	maxLentB        int64            // bound of a connection's lent bytes (lend.go)
	poison          bool             // poison released lent buffers (lend.go)
	inlineQuiet     time.Duration    // see defaultInlineQuiet
	now             func() time.Time // the clock of writes (quiet time, write deadline): time.Now, or a test's
	hooks           hooks            // set by package tests only, before the transport starts
	tlsServer       *tls.Config
	tlsClient       *tls.Config
	ln              net.Listener

	started atomic.Bool
	closing atomic.Bool
	done    chan struct{}

	mu    sync.Mutex
	peers sync.Map // identity -> *peer
	// lastPeer is the peer Send found last (peerForSend), which a stream
	// of messages to one peer finds without hashing its identity. It may
	// be a removed peer, which Send sees under the peer's lock.
	lastPeer atomic.Pointer[peer]
	raw      map[net.Conn]struct{} // every open socket, for Shutdown
	sources  map[string]*source    // inbound connections by source address
	inbound  int                   // established inbound connections
	conns    atomic.Int64          // attached connections
	wg       sync.WaitGroup

	protocolErrors atomic.Int64
	authFailures   atomic.Int64
	handshaking    atomic.Int64 // accepted connections in handshake
	refused        atomic.Int64 // connections refused at a handshake limit
	refusedConns   atomic.Int64 // connections refused at an established-connection limit
	idleClosed     atomic.Int64
	busyLog        rateLog
	connsLog       rateLog
	authLog        rateLog // failed authentications of inbound connections
	badLog         rateLog // inbound connections that do not speak the protocol
	protoLog       rateLog // established connections closed for a protocol error
	timeouts       atomic.Int64
	hsFailures     atomic.Int64 // handshakes failed for another reason than authentication
	identityInUse  atomic.Int64 // inbound connections refused with ErrIdentityInUse
	inUseLog       rateLog
	probeTimeout   time.Duration // how long a claimed identity's live connection may take to close
	forgedReplies  atomic.Int64  // replies from a connection whose peer the ask did not go to
	forgedLog      rateLog       // forged replies, logged at most once a minute
	unrouted       atomic.Int64  // replies and failure notices whose connection is gone
	refusedTypes   atomic.Int64  // frames refused undecoded: a type their target does not take
	undecodable    atomic.Int64  // requests that could not be decoded (unknown type, bad bytes, decode bound)
	undecodableLog rateLog       // those, logged at most every refusedLogInterval
	lentBuffers    atomic.Int64  // buffers lent to borrowed messages, not yet released
	lentBytes      atomic.Int64  // their bytes
}

// NewTransport returns a transport configured by opts. It reads the rest of
// its configuration (limits, authentication, TLS, port retries) from the
// env's Conf when the env starts it.
func NewTransport(opts ...Option) *Transport {
	t := &Transport{raw: make(map[net.Conn]struct{}), sources: make(map[string]*source), done: make(chan struct{})}
	for _, o := range opts {
		o.apply(&t.opts)
	}
	if t.opts.bindHost == "" {
		t.opts.bindHost = DefaultBindHost
	}
	t.inlineQuiet = defaultInlineQuiet
	t.now = time.Now
	t.jitter.r = t.opts.rand
	if t.opts.inlineQuiet != nil {
		t.inlineQuiet = *t.opts.inlineQuiet
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
	if err := t.readConf(conf); err != nil {
		return actor.TransportInfo{}, err
	}
	if t.opts.clientMode {
		key, id := newClientKey()
		t.info = actor.TransportInfo{Identity: id, ClientMode: true}
		t.hs.identity, t.hs.clientMode, t.hs.clientKey = id, true, key
		return t.info, nil
	}
	if t.tlsServer != nil && len(t.tlsServer.Certificates) == 0 {
		return actor.TransportInfo{}, fmt.Errorf("netty: %s needs %s and %s on a server", KeySSLEnabled, KeySSLCertChain, KeySSLPrivateKey)
	}
	if err := t.bind(conf); err != nil {
		return actor.TransportInfo{}, err
	}
	return t.info, nil
}

// readConf reads the transport's settings from conf: message size,
// timeouts, limits, bounds, authentication and TLS.
func (t *Transport) readConf(conf *actor.Conf) error {
	var err error
	if t.maxSize, err = conf.MaxMessageSize(); err != nil {
		return err
	}
	if err := t.readTimeouts(conf); err != nil {
		return err
	}
	if err := t.readLimits(conf); err != nil {
		return err
	}
	if t.idleConnTimeout, err = conf.GetDuration(KeyIdleTimeout, defaultIdleTimeout, time.Second); err != nil {
		return err
	}
	if err := t.readBounds(conf); err != nil {
		return err
	}
	return t.readSecurity(conf)
}

// readTimeouts reads the handshake, connect, write and identity-probe
// timeouts and the reconnect backoff.
func (t *Transport) readTimeouts(conf *actor.Conf) error {
	var err error
	if t.hsTimeout, err = positiveTimeout(conf, KeyAuthTimeout, "30s"); err != nil {
		return err
	}
	// The connect and connection timeouts default to spark.network.timeout,
	// read (and reported) under its own key.
	netTimeout, err := positiveTimeout(conf, actor.KeyNetworkTimeout, "120s")
	if err != nil {
		return err
	}
	if t.writeTimeout, err = timeoutOr(conf, KeyConnectionTimeout, netTimeout); err != nil {
		return err
	}
	// As Spark's TransportConf, a connect's timeout defaults to the
	// connection timeout, and its error names the key that set it.
	if t.connectTimeout, err = timeoutOr(conf, KeyConnectionCreationTimeout, t.writeTimeout); err != nil {
		return err
	}
	t.connectKey = firstSet(conf, KeyConnectionCreationTimeout, KeyConnectionCreationTimeout, KeyConnectionTimeout, actor.KeyNetworkTimeout)
	t.idleTimeout, t.idleTimeoutKey = t.writeTimeout, firstSet(conf, actor.KeyNetworkTimeout, KeyConnectionTimeout)
	if t.backoffInitial, err = conf.GetDuration(KeyConnectBackoff, defaultConnectBackoff, time.Millisecond); err != nil {
		return err
	}
	if t.backoffMax, err = conf.GetDuration(KeyConnectBackoffMax, defaultConnectBackoffMax, time.Millisecond); err != nil {
		return err
	}
	if t.backoffInitial < 0 || t.backoffMax < t.backoffInitial {
		v, _ := conf.Lookup(KeyConnectBackoffMax)
		return &actor.ConfError{Key: KeyConnectBackoffMax, Value: v,
			Err: fmt.Errorf("must be at least %s (%s)", KeyConnectBackoff, t.backoffInitial)}
	}
	t.probeTimeout, err = conf.GetDuration(KeyIdentityProbeTimeout, defaultIdentityProbeTimeout, time.Millisecond)
	return err
}

// readBounds reads the bounds of a peer's queued bytes and of a
// connection's unprocessed messages and their bytes.
func (t *Transport) readBounds(conf *actor.Conf) error {
	var err error
	if t.maxQueued, err = positiveSize(conf, KeyMaxQueuedBytes, defaultMaxQueuedBytes); err != nil {
		return err
	}
	if t.maxInFlightB, err = positiveSize(conf, KeyMaxInFlightBytes, defaultMaxInFlightBytes); err != nil {
		return err
	}
	n, err := conf.GetInt(KeyMaxInFlightMessages, defaultMaxInFlightMessages)
	if err != nil {
		return err
	}
	if n < 1 {
		return &actor.ConfError{Key: KeyMaxInFlightMessages, Value: strconv.Itoa(n), Err: errors.New("must be at least 1")}
	}
	t.maxInFlight = int64(n)
	if t.maxLentB, err = positiveSize(conf, KeyMaxLentBytes, conf.Get(KeyMaxInFlightBytes, defaultMaxInFlightBytes)); err != nil {
		return err
	}
	t.poison, err = conf.GetBool(KeyPoisonReleasedBuffers, false)
	return err
}

// readSecurity reads the authentication secret (and key id) and the TLS
// configurations.
func (t *Transport) readSecurity(conf *actor.Conf) error {
	var err error
	if t.hs.secret, err = AuthSecret(conf); err != nil {
		return err
	}
	if t.hs.secret != nil {
		if t.hs.keyID, err = readKeyID(conf); err != nil {
			return err
		}
		t.hs.authKeys = t.opts.authKeys
	}
	t.tlsServer, t.tlsClient, err = tlsConfigs(conf)
	return err
}

// bind binds the listener, sets the identity it advertises and starts
// accepting connections.
func (t *Transport) bind(conf *actor.Conf) error {
	retries, err := PortMaxRetries(conf)
	if err != nil {
		return err
	}
	ln, err := listen(t.network(), t.opts.bindHost, t.opts.port, retries, func(p int) {
		t.log.Warn().Msgf("Could not bind on port %d (in use). Attempting port %d (%s=%d).",
			p, p+1, KeyPortMaxRetries, retries)
	})
	if err != nil {
		return err
	}
	t.ln = ln
	addr := actor.NewRpcAddress(t.advertiseHost(), ln.Addr().(*net.TCPAddr).Port)
	t.info = actor.TransportInfo{Identity: addr.HostPort(), Address: addr}
	t.hs.identity = t.info.Identity
	t.wg.Add(1)
	go t.acceptLoop()
	t.log.Debug().Str("bind", ln.Addr().String()).Str("address", addr.HostPort()).Msg("listening")
	return nil
}

// advertiseHost returns the host that peers reach the listener at: the
// advertised host if one was given, else the bind host, or the machine's
// name when the bind host is an unspecified address.
func (t *Transport) advertiseHost() string {
	if t.opts.advertiseHost != "" {
		return t.opts.advertiseHost
	}
	advertise := t.opts.bindHost
	if ip := net.ParseIP(strings.Trim(advertise, "[]")); ip != nil && ip.IsUnspecified() {
		// Listening everywhere: advertise the machine's name.
		if h, err := os.Hostname(); err == nil && h != "" {
			advertise = h
		}
	}
	return advertise
}

// listen binds host:port, trying port+1, port+2, ... up to retries times
// when the port is taken (Spark's Utils.startServiceOnPort), and tells
// moved of each move. Port 0 binds a random port.
func listen(nw Network, host string, port, retries int, moved func(port int)) (net.Listener, error) {
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("netty: port %d is not between 0 and 65535", port)
	}
	var lastErr error
	for i := 0; i <= max(retries, 0); i++ {
		p := port
		if port != 0 {
			p = port + i
			if p > 65535 {
				break
			}
		}
		ln, err := nw.Listen("tcp", net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(p)))
		if err == nil {
			return ln, nil
		}
		lastErr = err
		if port == 0 || !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
		if i < max(retries, 0) && p < 65535 {
			moved(p)
		}
	}
	return nil, fmt.Errorf("netty: could not bind on %s port %d after %d retries (%s): %w",
		host, port, retries, KeyPortMaxRetries, lastErr)
}

// Info returns how the env is reachable (valid after Start).
func (t *Transport) Info() actor.TransportInfo { return t.info }

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

var _ actor.Transport = (*Transport)(nil)
