package actor

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"
)

// stopSignal is the queued poison that stops an endpoint after the messages
// already in its mailbox (protoactor's Stop would jump the queue).
type stopSignal struct{}

var theStopSignal = &stopSignal{}

type netEventKind int

const (
	netConnected netEventKind = iota
	netDisconnected
	netError
)

// netEvent is a network event queued to every endpoint.
type netEvent struct {
	kind netEventKind
	addr RpcAddress
	err  error
}

// cell is the runtime of one registered endpoint: the protoactor actor that
// wraps it, its inbox state and its hooks.
type cell struct {
	env  *Env
	name string
	ep   Endpoint
	log  zerolog.Logger
	ctx  Context
	pid  *protoactor.PID
	ref  *Ref

	replier  Replier
	onError  ErrorHandler
	threads  int
	loop     *poolDispatcher // dedicated loop, nil on the shared one
	workers  chan func()     // concurrent handlers (threads > 1)
	workerWG sync.WaitGroup

	proc     atomic.Pointer[protoactor.Process]
	self     atomic.Pointer[Ref]
	started  bool
	stopping atomic.Bool // stop requested: new messages are refused
	stopped  atomic.Bool // OnStop has run: queued messages are dropped
	done     chan struct{}
}

func newCell(e *Env, name string, ep Endpoint) *cell {
	c := &cell{
		env:  e,
		name: name,
		ep:   ep,
		log:  e.log.With().Str("endpoint", name).Logger(),
		pid:  protoactor.NewPID(e.identity, name),
		done: make(chan struct{}),
	}
	c.ctx.cell = c
	c.replier, _ = ep.(Replier)
	c.onError, _ = ep.(ErrorHandler)
	if iso, ok := ep.(Isolated); ok {
		c.threads = max(1, iso.ThreadCount())
	}
	c.ref = &Ref{env: e, pid: c.pid, name: name, addr: e.info.Address, client: e.info.ClientMode, cell: c}
	c.self.Store(c.ref)
	return c
}

// post queues a message in the endpoint's mailbox.
func (c *cell) post(msg any) {
	if p := c.proc.Load(); p != nil {
		(*p).SendUserMessage(c.pid, msg)
		return
	}
	c.env.system.Root.Send(c.pid, msg)
}

// Receive is the protoactor actor behaviour of the endpoint.
func (c *cell) Receive(actx protoactor.Context) {
	switch m := actx.Message().(type) {
	case *Future:
		if c.inline() {
			c.handleAsk(m.req, nil, m) // no closure on the serial path
		} else {
			c.dispatch(func() { c.handleAsk(m.req, nil, m) })
		}
	case proto.Message:
		if sender := actx.Sender(); sender != nil {
			if c.inline() {
				c.handleAsk(m, sender, nil)
			} else {
				c.dispatch(func() { c.handleAsk(m, sender, nil) })
			}
		} else if c.workers == nil {
			c.handleSend(m) // the hot path: no closure
		} else {
			c.dispatch(func() { c.handleSend(m) })
		}
	case *netEvent:
		c.dispatch(func() { c.handleNetEvent(m) })
	case processedMark:
		m()
	case *protoactor.Started:
		c.start()
	case *stopSignal:
		c.stop()
	case protoactor.SystemMessage, protoactor.AutoReceiveMessage:
		// Lifecycle messages of protoactor itself (Stopping, Stopped, ...).
	default:
		err := fmt.Errorf("%w: %T is not a protobuf message", ErrUnsupportedMessage, m)
		if sender := actx.Sender(); sender != nil {
			c.env.reply(sender, FailureToProto(err))
		}
		c.handleError(err)
	}
}

// inline reports whether a message is handled on the mailbox's goroutine
// (always, except on a concurrent endpoint that has not stopped).
func (c *cell) inline() bool { return c.workers == nil || c.stopped.Load() }

// dispatch runs fn inline, or on the worker goroutines of a concurrent
// endpoint.
func (c *cell) dispatch(fn func()) {
	if c.inline() {
		fn()
		return
	}
	c.workers <- fn
}

func (c *cell) start() {
	if c.started {
		return
	}
	c.started = true
	if s, ok := c.ep.(Starter); ok {
		if err := c.call(func() error { return s.OnStart(&c.ctx) }); err != nil {
			c.handleError(err)
		}
	}
	if c.threads > 1 {
		c.workers = make(chan func(), 1024)
		c.workerWG.Add(c.threads)
		for range c.threads {
			go func() {
				defer c.workerWG.Done()
				for fn := range c.workers {
					fn()
				}
			}()
		}
	}
}

func (c *cell) stop() {
	if c.stopped.Load() {
		return
	}
	if c.workers != nil {
		close(c.workers)
		c.workerWG.Wait()
	}
	c.self.Store(nil)
	if s, ok := c.ep.(Stopper); ok {
		if err := c.call(func() error { return s.OnStop(&c.ctx) }); err != nil {
			c.handleError(err)
		}
	}
	c.stopped.Store(true)
	if c.loop != nil {
		c.loop.close()
	}
	c.env.cellStopped(c)
	close(c.done)
}

func (c *cell) handleSend(msg proto.Message) {
	if c.stopped.Load() {
		c.env.dropped(c.name, msg)
		return
	}
	if err := c.call(func() error { return c.ep.Receive(&c.ctx, msg) }); err != nil {
		c.handleError(c.unsupported(err, msg, nil))
	}
}

func (c *cell) handleAsk(msg proto.Message, sender *protoactor.PID, fut *Future) {
	cc := &CallContext{Context: &c.ctx, sender: sender, fut: fut}
	if c.stopped.Load() {
		cc.SendFailure(&EndpointNotFoundError{Name: c.name})
		c.env.dropped(c.name, msg)
		return
	}
	var err error
	if c.replier == nil {
		err = ErrUnsupportedMessage
	} else {
		err = c.call(func() error { return c.replier.ReceiveAndReply(cc, msg) })
	}
	if err != nil {
		err = c.unsupported(err, msg, cc)
		cc.SendFailure(err)
		c.handleError(err)
	}
}

// unsupported turns a bare ErrUnsupportedMessage into Spark's
// "Unsupported message TYPE from ADDR".
func (c *cell) unsupported(err error, msg proto.Message, cc *CallContext) error {
	if !errors.Is(err, ErrUnsupportedMessage) {
		return err
	}
	var ue *UnsupportedMessageError
	if errors.As(err, &ue) {
		return err
	}
	from := c.env.Address().String()
	if cc != nil {
		from = cc.SenderAddress().String()
	}
	return &UnsupportedMessageError{Type: string(msg.ProtoReflect().Descriptor().FullName()), From: from}
}

func (c *cell) handleNetEvent(ev *netEvent) {
	if c.stopped.Load() {
		return
	}
	var err error
	switch ev.kind {
	case netConnected:
		if h, ok := c.ep.(ConnectHandler); ok {
			err = c.call(func() error { return h.OnConnected(&c.ctx, ev.addr) })
		}
	case netDisconnected:
		if h, ok := c.ep.(DisconnectHandler); ok {
			err = c.call(func() error { return h.OnDisconnected(&c.ctx, ev.addr) })
		}
	case netError:
		if h, ok := c.ep.(NetworkErrorHandler); ok {
			err = c.call(func() error { return h.OnNetworkError(&c.ctx, ev.err, ev.addr) })
		}
	}
	if err != nil {
		c.handleError(err)
	}
}

// call runs a hook and turns a panic into a *PanicError.
func (c *cell) call(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return fn()
}

func (c *cell) handleError(err error) {
	if c.onError == nil {
		c.logError(err)
		return
	}
	defer func() {
		if r := recover(); r != nil {
			c.log.Error().Interface("panic", r).AnErr("error", err).Msg("OnError panicked; ignoring")
		}
	}()
	c.onError.OnError(&c.ctx, err)
}

func (c *cell) logError(err error) {
	ev := c.log.Error()
	if c.stopped.Load() {
		ev = c.log.Debug()
	}
	var pe *PanicError
	if errors.As(err, &pe) {
		ev = ev.Bytes("stack", pe.Stack)
	}
	ev.Err(err).Msg("Ignoring error")
}
