// The cell: a registered endpoint as a protoactor process, running its handlers.

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
	"google.golang.org/protobuf/reflect/protoreflect"
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

// cell is the runtime of one registered endpoint: its mailbox, its inbox
// state and its hooks. It is the protoactor Process of the endpoint's PID
// (what plain protoactor code reaches through the process registry) and the
// MessageInvoker its mailbox calls; no protoactor actor context is involved.
type cell struct {
	env  *Env
	name string
	ep   Endpoint
	log  zerolog.Logger
	ctx  Context
	pid  *protoactor.PID
	ref  *Ref
	mb   *mailbox
	in   *inbox // what a transport keeps to post to it (TransportHost.Inbox)

	replier  Replier
	accepts  func(protoreflect.FullName) bool // the types it takes from a transport; nil: any
	onError  ErrorHandler
	threads  int
	loop     *poolDispatcher // dedicated loop, nil on the shared one
	workers  chan func()     // concurrent handlers (threads > 1)
	workerWG sync.WaitGroup

	self     atomic.Pointer[Ref]
	started  bool
	stopping atomic.Bool // stop requested: new messages are refused
	stopped  atomic.Bool // OnStop has run: queued messages are dropped
	done     chan struct{}

	retired bool // its received counts went to its name's counters (under mb.mu)

	// borrows: the endpoint takes lent messages (borrow.go); loan is the
	// memory of the one it is handling, nil for an owned one (its loop only).
	borrows bool
	loan    Loan

	peers bool // the endpoint is PeerAware (peer.go)
}

// newCell builds the endpoint's runtime, its mailbox on disp, and queues
// OnStart as its first message. Nothing can reach the cell before its
// caller publishes it, and by then its mailbox is complete. The mailbox is
// held: the caller starts it once the cell is published, so that OnStart
// (which may make a peer answer at once, by name) never runs before the
// name is found.
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
	c.in = newInbox(c)
	c.replier, _ = ep.(Replier)
	if a, ok := ep.(Acceptor); ok {
		c.accepts = a.Accepts
	} else if r, ok := ep.(*Router); ok {
		c.accepts = r.Handles
	}
	c.onError, _ = ep.(ErrorHandler)
	if iso, ok := ep.(Isolated); ok {
		c.threads = max(1, iso.ThreadCount())
	}
	c.borrows = borrows(ep, c.threads)
	if pa, ok := ep.(PeerAware); ok {
		c.peers = pa.PeerAware()
	}
	c.ref = &Ref{env: e, pid: c.pid, name: name, addr: e.info.Address, client: e.info.ClientMode, cell: c}
	c.self.Store(c.ref)
	var disp *poolDispatcher = e.shared
	if c.threads > 0 {
		c.loop = newOwnedDispatcher(1, loopThroughput, &e.loops)
		disp = c.loop
	}
	c.mb = &mailbox{invoker: c, dispatcher: disp}
	c.mb.processFn = c.mb.process
	c.mb.status.Store(mailboxHeld)
	// A system message: handled before any user message.
	c.mb.PostSystemMessage(startedMessage)
	return c
}

var startedMessage = &protoactor.Started{}

// post queues a message in the endpoint's mailbox.
func (c *cell) post(msg any) { c.mb.PostUserMessage(msg) }

// SendUserMessage queues a message from plain protoactor code; it makes
// *cell a protoactor Process.
func (c *cell) SendUserMessage(_ *protoactor.PID, msg any) { c.post(msg) }

// SendSystemMessage handles protoactor's Stop (as Env.Stop does) and
// ignores the other system messages; it makes *cell a protoactor Process.
func (c *cell) SendSystemMessage(_ *protoactor.PID, msg any) {
	if _, ok := msg.(*protoactor.Stop); ok {
		_ = c.env.stopCell(c)
	}
}

// Stop stops the endpoint as Env.Stop does; it makes *cell a protoactor
// Process.
func (c *cell) Stop(*protoactor.PID) { _ = c.env.stopCell(c) }

// InvokeSystemMessage implements protoactor.MessageInvoker.
func (c *cell) InvokeSystemMessage(msg any) {
	if _, ok := msg.(*protoactor.Started); ok {
		c.start()
	}
}

// InvokeUserMessage implements protoactor.MessageInvoker.
func (c *cell) InvokeUserMessage(msg any) {
	switch m := msg.(type) {
	case *inboundAsk:
		c.receiveAsk(m)
	case *deferredInbound:
		c.receiveDeferredAsk(m)
	case *protoactor.MessageEnvelope:
		c.receive(m.Message, m.Sender)
	default:
		c.receive(msg, nil)
	}
}

// EscalateFailure implements protoactor.MessageInvoker. Hooks run under
// recover (see call), so only a defect of the runtime itself ends here: it
// is logged and the mailbox goes on.
func (c *cell) EscalateFailure(reason any, msg any) {
	c.log.Error().Interface("panic", reason).Str("message", fmt.Sprintf("%T", msg)).Bytes("stack", debug.Stack()).
		Msg("endpoint runtime panicked")
}

// receive handles one user message; sender is the reply-to PID of an ask
// from plain protoactor code (a RequestFuture's MessageEnvelope). Asks from
// other envs arrive as inboundAsk and go through receiveAsk.
func (c *cell) receive(msg any, sender *protoactor.PID) {
	switch m := msg.(type) {
	case *Future:
		m.call = CallContext{Context: &c.ctx, fut: m}
		c.receiveCall(m.req, &m.call)
	case *protoactor.PoisonPill:
		_ = c.env.stopCell(c)
	case proto.Message:
		if sender != nil {
			c.receiveCall(m, &CallContext{Context: &c.ctx, sender: sender})
		} else if c.workers == nil {
			c.handleSend(m) // the hot path: no closure
		} else {
			c.dispatch(func() { c.handleSend(m) })
		}
	case *netEvent:
		c.dispatch(func() { c.handleNetEvent(m) })
	case processedMark:
		m()
	case *stopSignal:
		c.stop()
	case Deferred:
		// A one-way message a transport posted undecoded (an ask comes
		// as a deferredInbound); after every other case, off the hot path.
		switch decoded, loan, ok := c.decode(m); {
		case !ok:
		case loan != nil:
			c.receiveLent(decoded, loan, nil)
		default:
			c.receive(decoded, nil)
		}
	default:
		err := fmt.Errorf("%w: %T is not a protobuf message", ErrUnsupportedMessage, m)
		if sender != nil {
			c.env.reply(sender, FailureToProto(err))
		}
		c.handleError(err)
	}
}

// receiveAsk handles an ask that a transport delivered.
func (c *cell) receiveAsk(a *inboundAsk) {
	a.call.Context = &c.ctx
	c.receiveCall(a.req, &a.call)
}

// receiveCall handles the ask msg, whose reply goes through cc.
func (c *cell) receiveCall(msg proto.Message, cc *CallContext) {
	if c.inline() {
		c.handleAsk(msg, cc) // no closure on the serial path
	} else {
		c.dispatch(func() { c.handleAsk(msg, cc) })
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
	close(c.done) // before the env may count the endpoint gone: periodic sends stop on it
	c.env.cellStopped(c)
}

func (c *cell) handleSend(msg proto.Message) {
	if c.stopped.Load() || c.env.dropQueued.Load() {
		c.env.dropped(c.name, msg)
		return
	}
	if err := c.call(func() error { return c.ep.Receive(&c.ctx, msg) }); err != nil {
		c.handleError(c.unsupported(err, msg, nil))
	}
}

func (c *cell) handleAsk(msg proto.Message, cc *CallContext) {
	if c.stopped.Load() {
		if cc.fut == nil && cc.sender != nil {
			c.env.replyNotFound(cc.sender, c.name)
		} else {
			cc.SendFailure(&EndpointNotFoundError{Name: c.name})
		}
		c.env.dropped(c.name, msg)
		return
	}
	if c.env.dropQueued.Load() {
		cc.SendFailure(ErrEnvStopped)
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
	if c.stopped.Load() || c.env.dropQueued.Load() {
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
