// The Env type: construction and its accessors.

package actor

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"
)

// VerifierName is the name of the endpoint that answers lookups
// (CheckExistence) on every env that listens.
const VerifierName = "endpoint-verifier"

// Env is Spark's RpcEnv: a named set of endpoints, each a protoactor actor
// registered under its name, reachable through Refs. Create one with NewEnv
// (or with package netty for a networked env), register endpoints, and
// Shutdown when done.
type Env struct {
	name      string
	conf      *Conf
	log       zerolog.Logger
	baseLog   zerolog.Logger // the given logger with env=NAME, for Logger()
	transport Transport
	info      TransportInfo
	identity  string
	shared    *poolDispatcher

	askTimeout    RpcTimeout
	lookupTimeout RpcTimeout
	onDrop        func(name string, msg proto.Message)
	numDropped    atomic.Uint64
	dropLog       dropLog   // undeliverable messages, rate-limited
	paReplies     paReplies // plain protoactor asks to remote PIDs, bound to their peer

	// The protoactor actor system that plain protoactor code uses to reach
	// the endpoints; created by System on first use (see System).
	system    atomic.Pointer[protoactor.ActorSystem]
	sysMu     sync.Mutex // creating system; orders it against its shutdown
	sysClosed bool

	mu         sync.Mutex // registration and shutdown
	endpoints  sync.Map   // name -> *cell: the endpoints reachable by name
	live       sync.WaitGroup
	loops      sync.WaitGroup // the workers of the endpoints' own loops (Isolated)
	liveCells  sync.Map       // *cell -> struct{}: registered, OnStop not yet run
	stopped    atomic.Bool
	dropQueued atomic.Bool // Close: queued messages are dropped, not handled
	stopping   atomic.Bool // a Shutdown or Close has begun

	futures *futureRegistry // pending asks

	metrics     *prometheus.Registry // see Metrics
	metricsOnce sync.Once            // makes metrics when the env was given none
	// metricsGiven: metrics came from WithMetricsRegistry, which the
	// env leaves when it terminates.
	metricsGiven bool
	msgs         msgTable // messages sent and received
	asks         askStats // ask latency and failures

	filesOnce sync.Once   // makes files
	files     *FileServer // see FileServer

	shutdownOnce sync.Once
	terminated   chan struct{}
	shutdownErr  error
}

// NewEnv creates an env named name with configuration conf (nil for an empty
// one). With a transport that listens, it also registers the
// endpoint-verifier that answers lookups from other envs.
func NewEnv(name string, conf *Conf, opts ...Option) (*Env, error) {
	if conf == nil {
		conf = NewConf()
	}
	var o envOptions
	for _, opt := range opts {
		opt.apply(&o)
	}
	base := zerolog.Nop()
	if o.logger != nil {
		base = *o.logger
	}
	e := &Env{
		name:       name,
		conf:       conf,
		log:        base.With().Str("component", "rpcenv").Str("env", name).Logger(),
		baseLog:    base.With().Str("env", name).Logger(),
		transport:  o.transport,
		onDrop:     o.onDrop,
		futures:    newFutureRegistry(),
		terminated: make(chan struct{}),
	}
	var err error
	if e.askTimeout, err = AskTimeout(conf); err != nil {
		return nil, err
	}
	if e.lookupTimeout, err = LookupTimeout(conf); err != nil {
		return nil, err
	}
	threads, err := conf.GetInt(KeyDispatcherThreads, 0)
	if err != nil {
		return nil, err
	}
	if threads < 0 {
		v, _ := conf.Lookup(KeyDispatcherThreads)
		return nil, &ConfError{Key: KeyDispatcherThreads, Value: v, Err: errors.New("must not be negative (0: the default)")}
	}
	if threads == 0 {
		cores := o.usableCores
		if cores <= 0 {
			cores = runtime.GOMAXPROCS(0)
		}
		threads = max(2, cores)
	}
	e.asks.clock = time.Now()
	if err := e.setupMetrics(o.metrics); err != nil {
		return nil, err
	}
	e.identity = localIdentity
	if e.transport != nil {
		info, err := e.transport.Start(transportSink{e})
		if err != nil {
			e.unregisterMetrics()
			return nil, err
		}
		e.info = info
		e.identity = info.Identity
	}
	e.shared = newPoolDispatcher(threads, loopThroughput)
	e.futures.start()
	if e.transport != nil && !e.info.ClientMode {
		if _, err := e.RegisterEndpoint(VerifierName, &verifier{env: e}); err != nil {
			_ = e.Shutdown(context.Background())
			return nil, err
		}
	}
	e.log.Debug().Str("address", e.info.Address.String()).Int("dispatcherThreads", threads).Msg("env started")
	return e, nil
}

// Name returns the env's name.
func (e *Env) Name() string { return e.name }

// Conf returns the env's configuration.
func (e *Env) Conf() *Conf { return e.conf }

// Logger returns the env's logger: the one given with WithLogger, with the
// field env=NAME and no component field, so that a component built on the
// env (a transport, a driver, a daemon) adds its own without repeating it.
func (e *Env) Logger() zerolog.Logger { return e.baseLog }

// localIdentity is the Address of the PIDs of an env without a transport:
// the one protoactor gives local PIDs.
const localIdentity = "nonhost"

// loopThroughput is how many messages an endpoint handles in one turn on a
// loop worker before the next endpoint with mail gets the worker.
const loopThroughput = 300

// Address returns the env's advertised listen address; the zero RpcAddress
// for a local env or one in client mode.
func (e *Env) Address() RpcAddress { return e.info.Address }

// Identity returns the Address of the env's PIDs (see Transport).
func (e *Env) Identity() string { return e.identity }

// ClientMode reports whether the env has a transport that does not listen.
func (e *Env) ClientMode() bool { return e.info.ClientMode }

// AskTimeout returns the default timeout of Ask and AskSync.
func (e *Env) AskTimeout() RpcTimeout { return e.askTimeout }

// LookupTimeout returns the timeout of SetupEndpointRef.
func (e *Env) LookupTimeout() RpcTimeout { return e.lookupTimeout }

// Dropped returns how many messages were dropped because their endpoint had
// stopped.
func (e *Env) Dropped() uint64 { return e.numDropped.Load() }
