package actor

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// VerifierName is the name of the endpoint that answers lookups
// (CheckExistence) on every env that listens.
const VerifierName = "endpoint-verifier"

// Option configures an Env.
type Option func(*envOptions)

type envOptions struct {
	transport   Transport
	logger      *zerolog.Logger
	usableCores int
	onDrop      func(name string, msg proto.Message)
}

// WithTransport connects the env to other envs through t. Without it the env
// is purely local.
func WithTransport(t Transport) Option { return func(o *envOptions) { o.transport = t } }

// WithLogger sets the env's logger. The default, zerolog.Nop(), logs nothing.
func WithLogger(l zerolog.Logger) Option { return func(o *envOptions) { o.logger = &l } }

// WithNumUsableCores sets the core count that sizes the shared message loop
// when spark.rpc.netty.dispatcher.numThreads is unset (default GOMAXPROCS).
func WithNumUsableCores(n int) Option { return func(o *envOptions) { o.usableCores = n } }

// WithDropHandler sets a function told of every message that was dropped
// because its endpoint had stopped (Spark's Inbox.onDrop). It runs on the
// goroutine that noticed the drop and must not block.
func WithDropHandler(fn func(name string, msg proto.Message)) Option {
	return func(o *envOptions) { o.onDrop = fn }
}

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
	dropLog       dropLog // undeliverable messages, rate-limited

	// The protoactor actor system that plain protoactor code uses to reach
	// the endpoints; created by System on first use (see System).
	system    atomic.Pointer[protoactor.ActorSystem]
	sysMu     sync.Mutex // creating system; orders it against its shutdown
	sysClosed bool

	mu         sync.Mutex // registration and shutdown
	endpoints  sync.Map   // name -> *cell: the endpoints reachable by name
	live       sync.WaitGroup
	liveCells  sync.Map // *cell -> struct{}: registered, OnStop not yet run
	stopped    atomic.Bool
	dropQueued atomic.Bool // Close: queued messages are dropped, not handled
	stopping   atomic.Bool // a Shutdown or Close has begun

	futures *futureRegistry // pending asks

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
		opt(&o)
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
	if threads <= 0 {
		cores := o.usableCores
		if cores <= 0 {
			cores = runtime.GOMAXPROCS(0)
		}
		threads = max(2, cores)
	}
	e.identity = localIdentity
	if e.transport != nil {
		info, err := e.transport.Start(transportSink{e})
		if err != nil {
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

// System returns a protoactor actor system through which plain protoactor
// code reaches the env's endpoints: Send, Request and RequestFuture on a
// Ref's PID, locally and, through the transport, on other envs. The
// endpoints themselves do not run on it: it is created on the first call,
// so that an env whose caller never needs it does not carry its cost (a
// protoactor actor system allocates about a thousand maps for its process
// registry).
func (e *Env) System() *protoactor.ActorSystem {
	if s := e.system.Load(); s != nil {
		return s
	}
	e.sysMu.Lock()
	defer e.sysMu.Unlock()
	if s := e.system.Load(); s != nil {
		return s
	}
	plog := e.baseLog.With().Str("component", "protoactor").Logger()
	s := protoactor.NewActorSystem(
		protoactor.WithLoggerFactory(func(*protoactor.ActorSystem) *slog.Logger {
			return slog.New(quietHandler{zerolog.NewSlogHandler(plog)})
		}),
		protoactor.WithDeadLetterRequestLogging(false),
	)
	s.ProcessRegistry.Address = e.identity
	s.EventStream.Subscribe(e.onDeadLetter)
	if e.transport != nil {
		rp := &remoteProcess{env: e}
		s.ProcessRegistry.RegisterAddressResolver(func(*protoactor.PID) (protoactor.Process, bool) {
			return rp, true
		})
	}
	e.mu.Lock()
	e.endpoints.Range(func(k, v any) bool {
		s.ProcessRegistry.Add(v.(*cell), k.(string))
		return true
	})
	e.system.Store(s)
	e.mu.Unlock()
	if e.sysClosed {
		s.Shutdown()
	}
	return s
}

// localProcess returns the protoactor process registered under id, when
// the env has an actor system.
func (e *Env) localProcess(id string) (protoactor.Process, bool) {
	if s := e.system.Load(); s != nil {
		return s.ProcessRegistry.GetLocal(id)
	}
	return nil, false
}

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

// RegisterEndpoint registers ep under name and returns its reference
// (Spark's setupEndpoint). OnStart is queued as the endpoint's first message;
// registration does not wait for it. It fails with ErrInvalidName,
// a *DuplicateEndpointError, or ErrEnvStopped.
func (e *Env) RegisterEndpoint(name string, ep Endpoint) (*Ref, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if ep == nil {
		return nil, fmt.Errorf("%w: nil endpoint for %q", ErrInvalidName, name)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped.Load() {
		return nil, ErrEnvStopped
	}
	if _, ok := e.endpoints.Load(name); ok {
		return nil, &DuplicateEndpointError{Name: name}
	}
	sys := e.system.Load()
	if sys != nil {
		if _, taken := sys.ProcessRegistry.GetLocal(name); taken {
			return nil, &DuplicateEndpointError{Name: name} // a protoactor process
		}
	}
	// The cell is complete (its mailbox runs, OnStart is queued first)
	// before anything can find it: only then is it published.
	c := newCell(e, name, ep)
	e.live.Add(1)
	e.liveCells.Store(c, struct{}{})
	if sys != nil {
		sys.ProcessRegistry.Add(c, name)
	}
	e.endpoints.Store(name, c)
	return c.ref, nil
}

// Endpoint returns the reference of the local endpoint name.
func (e *Env) Endpoint(name string) (*Ref, bool) {
	if c, ok := e.endpoints.Load(name); ok {
		return c.(*cell).ref, true
	}
	return nil, false
}

// Stop stops the endpoint of ref (Spark's stop(ref)): new messages to it
// fail with "Could not find NAME.", messages already queued are processed,
// then OnStop runs. The name is free for a new registration at once. It
// does not wait; stopping twice is a no-op.
func (e *Env) Stop(ref *Ref) error {
	if ref == nil {
		return fmt.Errorf("%w: nil ref", ErrInvalidName)
	}
	if !ref.local() {
		return fmt.Errorf("%w: %s is not an endpoint of this env", ErrEndpointNotFound, ref)
	}
	c := ref.localCell()
	if c == nil {
		return nil
	}
	return e.stopCell(c)
}

func (e *Env) stopCell(c *cell) error {
	if !c.stopping.CompareAndSwap(false, true) {
		return nil
	}
	// Release the name at once, in the env and in the process registry, so
	// that it can be registered again while this endpoint still works
	// through its queue (Spark's unregisterRpcEndpoint). e.mu orders this
	// against RegisterEndpoint and System.
	e.mu.Lock()
	e.endpoints.CompareAndDelete(c.name, c)
	if s := e.system.Load(); s != nil {
		if cur, ok := s.ProcessRegistry.GetLocal(c.name); ok && cur == protoactor.Process(c) {
			s.ProcessRegistry.Remove(c.pid)
		}
	}
	e.mu.Unlock()
	c.post(theStopSignal)
	return nil
}

func (e *Env) cellStopped(c *cell) {
	e.liveCells.Delete(c)
	e.live.Done()
}

// Shutdown stops the env, in this order:
//
//  1. it stops accepting work: every operation fails with ErrEnvStopped
//     from now on, and every endpoint is stopped as Stop does (it handles
//     the messages already queued, then OnStop runs);
//  2. it fails every pending ask made on this env, to a local or a remote
//     endpoint, at once with ErrEnvStopped (whatever its timeout);
//  3. it closes the transport: the listener and every connection, so that
//     the asks that peers have pending on this env fail at once; what was
//     queued for a peer is still written first, for at most a couple of
//     seconds and never past ctx;
//  4. it waits until every endpoint has run OnStop, and the loops have
//     ended, or until ctx ends.
//
// A handler that blocks therefore never keeps a connection open, nor an
// asker waiting. When ctx ends before every endpoint has stopped, Shutdown
// returns a *ShutdownError that wraps ctx's cause and names the endpoints
// still running; they stop in the background, and AwaitTermination or
// Terminated tell when. Calling Shutdown again waits again.
func (e *Env) Shutdown(ctx context.Context) error {
	e.beginShutdown(ctx)
	select {
	case <-e.terminated:
		return e.shutdownErr
	default:
	}
	select {
	case <-e.terminated:
		return e.shutdownErr
	case <-ctx.Done():
		return &ShutdownError{Env: e.name, Running: e.running(), Err: context.Cause(ctx)}
	}
}

// Close stops the env at once: the first three steps of Shutdown, except
// that the messages still queued for endpoints are dropped (counted by
// Dropped; the asks among them fail with ErrEnvStopped) instead of handled,
// and that nothing queued for a peer is written any more. It does not wait:
// each endpoint gets OnStop once its running handler, if any, returns, and
// Terminated is closed when all have. It always returns nil.
func (e *Env) Close() error {
	e.dropQueued.Store(true)
	if e.stopping.Load() {
		return nil // a Shutdown is under way; do not wait for its flush
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e.beginShutdown(ctx)
	return nil
}

// beginShutdown runs the first three steps of Shutdown once; ctx bounds how
// long the transport may take to close.
func (e *Env) beginShutdown(ctx context.Context) {
	e.shutdownOnce.Do(func() {
		e.stopping.Store(true)
		e.mu.Lock()
		e.stopped.Store(true)
		e.mu.Unlock()
		e.endpoints.Range(func(_, v any) bool {
			_ = e.stopCell(v.(*cell))
			return true
		})
		e.futures.failAll(ErrEnvStopped)
		if e.transport != nil {
			// The transport gives up flushing and waiting for its
			// goroutines when ctx ends; that is not an error of its own.
			if err := e.transport.Shutdown(ctx); err != nil && ctx.Err() == nil {
				e.shutdownErr = err
			}
		}
		go e.finishShutdown()
	})
}

// running returns the names of the endpoints that have not run OnStop yet.
func (e *Env) running() []string {
	var names []string
	e.liveCells.Range(func(k, _ any) bool {
		names = append(names, k.(*cell).name)
		return true
	})
	slices.Sort(names)
	return names
}

func (e *Env) finishShutdown() {
	e.live.Wait()
	e.futures.close()
	e.shared.closeAndWait()
	e.sysMu.Lock()
	e.sysClosed = true
	s := e.system.Load()
	e.sysMu.Unlock()
	if s != nil {
		s.Shutdown()
	}
	e.log.Debug().Msg("env terminated")
	close(e.terminated)
}

// AwaitTermination waits until a Shutdown has completed or ctx ends.
func (e *Env) AwaitTermination(ctx context.Context) error {
	select {
	case <-e.terminated:
		return e.shutdownErr
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Terminated is closed once a Shutdown has completed.
func (e *Env) Terminated() <-chan struct{} { return e.terminated }

// RemoteRef returns an unverified reference to the endpoint name of the env
// listening at addr. Use SetupEndpointRef to check that it exists.
func (e *Env) RemoteRef(addr RpcAddress, name string) *Ref {
	id := addr.HostPort()
	if id == e.identity {
		if r, ok := e.Endpoint(name); ok {
			return r
		}
	}
	return &Ref{env: e, pid: protoactor.NewPID(id, name), name: name, addr: addr}
}

// RefFromProto returns the reference a message carried.
func (e *Env) RefFromProto(p *messages.EndpointRef) (*Ref, error) {
	if p == nil || p.GetName() == "" || p.GetAddress() == "" {
		return nil, fmt.Errorf("%w: incomplete endpoint reference %v", ErrInvalidName, p)
	}
	if p.GetAddress() == e.identity {
		if r, ok := e.Endpoint(p.GetName()); ok {
			return r, nil
		}
		return &Ref{env: e, pid: protoactor.NewPID(e.identity, p.GetName()), name: p.GetName(), addr: e.info.Address, client: e.info.ClientMode}, nil
	}
	r := &Ref{env: e, pid: protoactor.NewPID(p.GetAddress(), p.GetName()), name: p.GetName(), client: p.GetClient()}
	if !p.GetClient() {
		addr, err := ParseHostPort(p.GetAddress())
		if err != nil {
			return nil, err
		}
		r.addr = addr
	}
	return r, nil
}

// SetupEndpointRef looks up the endpoint name on the env listening at addr
// by asking its endpoint-verifier, within the lookup timeout
// (spark.rpc.lookupTimeout). A missing endpoint is an *EndpointNotFoundError
// whose text is "Cannot find endpoint: spark://name@host:port".
func (e *Env) SetupEndpointRef(ctx context.Context, addr RpcAddress, name string) (*Ref, error) {
	if e.stopped.Load() {
		return nil, ErrEnvStopped
	}
	uri := EndpointAddress{Address: addr, Name: name}.String()
	if addr.HostPort() == e.identity {
		if r, ok := e.Endpoint(name); ok {
			return r, nil
		}
		return nil, &EndpointNotFoundError{Name: name, URI: uri}
	}
	v := e.RemoteRef(addr, VerifierName)
	res, err := ResultAs[*messages.CheckExistenceResponse](v.AskWithTimeout(ctx, &messages.CheckExistence{Name: name}, e.lookupTimeout))
	if err != nil {
		return nil, fmt.Errorf("lookup of %s: %w", uri, err)
	}
	if !res.GetExists() {
		return nil, &EndpointNotFoundError{Name: name, URI: uri}
	}
	return e.RemoteRef(addr, name), nil
}

// SetupEndpointRefByURI parses uri ("spark://name@host:port") and looks the
// endpoint up with SetupEndpointRef.
func (e *Env) SetupEndpointRefByURI(ctx context.Context, uri string) (*Ref, error) {
	a, err := ParseEndpointAddress(uri)
	if err != nil {
		return nil, err
	}
	return e.SetupEndpointRef(ctx, a.Address, a.Name)
}

// reply sends a reply or failure to the sender PID of an ask.
func (e *Env) reply(to *protoactor.PID, msg proto.Message) {
	if to == nil {
		return
	}
	if to.Address == e.identity {
		if deliverReply(e, to.Id, msg) {
			return
		}
	} else if e.transport != nil {
		// A reply to another env: straight to the transport, as
		// remoteProcess would do after protoactor resolved the PID.
		if err := e.transport.Send(to, nil, msg); err != nil {
			e.undeliverable(to, nil, msg, err)
		}
		return
	}
	if p, ok := e.localProcess(to.Id); ok {
		p.SendUserMessage(to, msg) // a protoactor future or actor
		return
	}
	e.log.Debug().Str("to", to.String()).Msg("Ignored a reply to an ask that has completed")
}

// replyNotFound fails the ask of to, made to the endpoint name that is not
// registered. A sparkrpc ask gets an *EndpointNotFoundError ("Could not
// find NAME."). Plain protoactor code (RequestFuture, Request) gets
// protoactor's own DeadLetterResponse, as from a local PID that does not
// exist, so that its Future fails with protoactor.ErrDeadLetter whether the
// endpoint was to be local or remote.
func (e *Env) replyNotFound(to *protoactor.PID, name string) {
	if strings.HasPrefix(to.Id, futureIDPrefix) {
		e.reply(to, FailureToProto(&EndpointNotFoundError{Name: name}))
		return
	}
	e.reply(to, &protoactor.DeadLetterResponse{Target: protoactor.NewPID(e.identity, name)})
}

func (e *Env) sendRemote(target, sender *protoactor.PID, msg proto.Message) error {
	if e.transport == nil {
		return ErrNoTransport
	}
	return e.transport.Send(target, sender, msg)
}

func (e *Env) peerAddress(identity string) RpcAddress {
	if identity == e.identity {
		return e.info.Address
	}
	if e.transport == nil {
		return RpcAddress{}
	}
	return e.transport.PeerAddress(identity)
}

func (e *Env) dropped(name string, msg proto.Message) {
	e.countDropped(name, msg)
	e.log.Debug().Str("endpoint", name).Str("message", string(msg.ProtoReflect().Descriptor().FullName())).
		Msg("Drop message because endpoint is stopped")
}

// countDropped counts a dropped message and tells the drop handler.
func (e *Env) countDropped(name string, msg proto.Message) {
	e.numDropped.Add(1)
	if e.onDrop != nil {
		e.onDrop(name, msg)
	}
}

// onDeadLetter accounts for messages that reached no process.
func (e *Env) onDeadLetter(ev any) {
	dl, ok := ev.(*protoactor.DeadLetterEvent)
	if !ok || dl.PID == nil {
		return
	}
	switch m := dl.Message.(type) {
	case *Future:
		m.complete(nil, &EndpointNotFoundError{Name: dl.PID.Id})
	case proto.Message:
		if isFutureID(dl.PID.Id) {
			e.log.Debug().Str("to", dl.PID.Id).Msg("Ignored a reply to an ask that has completed")
			return
		}
		if dl.Sender == nil {
			e.dropped(dl.PID.Id, m)
		}
	}
}

func (e *Env) postToAll(ev *netEvent) {
	if e.stopped.Load() {
		return
	}
	e.endpoints.Range(func(_, v any) bool {
		c := v.(*cell)
		if !c.stopping.Load() {
			c.post(ev)
		}
		return true
	})
}

// remoteProcess is the protoactor process of every PID on another env: it
// hands the message to the transport.
type remoteProcess struct{ env *Env }

func (p *remoteProcess) SendUserMessage(pid *protoactor.PID, message any) {
	_, msg, sender := protoactor.UnwrapEnvelope(message)
	pm, ok := msg.(proto.Message)
	if !ok {
		err := fmt.Errorf("%w: %T is not a protobuf message and cannot leave the process", ErrUnsupportedMessage, msg)
		if f, isFuture := msg.(*Future); isFuture {
			f.complete(nil, err)
			return
		}
		p.env.log.Error().Err(err).Str("to", pid.String()).Msg("message not sent")
		if sender != nil {
			p.env.undeliverable(pid, sender, nil, err)
		}
		return
	}
	if err := p.env.transport.Send(pid, sender, pm); err != nil {
		p.env.undeliverable(pid, sender, pm, err)
	}
}

func (p *remoteProcess) SendSystemMessage(pid *protoactor.PID, message any) {
	if w, ok := message.(*protoactor.Watch); ok {
		p.env.System().Root.Send(w.Watcher, &protoactor.Terminated{Who: pid, Why: protoactor.TerminatedReason_AddressTerminated})
	}
}

func (p *remoteProcess) Stop(*protoactor.PID) {}

// quietHandler lowers protoactor's info messages to debug: they describe its
// internals, not the application.
type quietHandler struct{ slog.Handler }

func (h quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	if l < slog.LevelWarn {
		l -= 4
	}
	return h.Handler.Enabled(ctx, l)
}

func (h quietHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		r.Level -= 4
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{h.Handler.WithAttrs(as)}
}

func (h quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h.Handler.WithGroup(name)}
}
