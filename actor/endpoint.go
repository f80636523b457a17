// The Endpoint interface and its optional lifecycle and network-event interfaces.

package actor

import (
	"sync/atomic"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Endpoint handles the one-way messages sent to it with Ref.Send: Spark's
// RpcEndpoint.receive. It is the one method every endpoint has; the other
// hooks are optional interfaces (Replier, Starter, Stopper, ErrorHandler,
// ConnectHandler, DisconnectHandler, NetworkErrorHandler, Isolated) that an
// endpoint implements when it needs them.
//
// An error returned by any hook (or a panic in it) goes to OnError; the
// endpoint keeps running. Return ErrUnsupportedMessage for a message the
// endpoint does not handle.
//
// Unless the endpoint is Isolated with a thread count above 1, its hooks are
// called one at a time, in the order the messages were queued, with a
// happens-before edge between consecutive calls: it needs no locking of its
// own state.
type Endpoint interface {
	Receive(ctx *Context, msg proto.Message) error
}

// ReceiveFunc adapts a function to an Endpoint.
type ReceiveFunc func(ctx *Context, msg proto.Message) error

// Receive calls f.
func (f ReceiveFunc) Receive(ctx *Context, msg proto.Message) error { return f(ctx, msg) }

// Replier is implemented by endpoints that answer asks (Ref.Ask, AskSync,
// and protoactor requests): Spark's receiveAndReply. The handler answers with
// ctx.Reply or ctx.SendFailure, now or later from any goroutine. A returned
// error (or a panic) fails the asker with that error and also goes to
// OnError. An endpoint that is not a Replier fails every ask with
// "Unsupported message".
type Replier interface {
	ReceiveAndReply(ctx *CallContext, msg proto.Message) error
}

// Acceptor is implemented by endpoints that tell which message types they
// take from other envs. A transport asks it before it decodes a message for
// the endpoint: a message of a type it does not accept is refused without
// being decoded (an asker fails with an error that matches
// ErrUnsupportedMessage; a one-way message is counted as dropped). Accepts
// is called from the transport's goroutines, concurrently with the
// endpoint's handlers: it must be safe for concurrent use, and its answers
// must not change once the endpoint is registered. Without it an endpoint
// that is a *Router takes the types it has handlers for (Router.Handles),
// and any other endpoint any registered type (still within the transport's
// decode bound). An endpoint that embeds a Router and has no handler of
// its own besides can accept what the Router handles:
//
//	func (e *myEndpoint) Accepts(name protoreflect.FullName) bool { return e.Router.Handles(name) }
type Acceptor interface {
	Accepts(name protoreflect.FullName) bool
}

// Starter is implemented by endpoints with a start hook. OnStart runs before
// any message, alone.
type Starter interface {
	OnStart(ctx *Context) error
}

// Stopper is implemented by endpoints with a stop hook. OnStop runs once,
// last and alone, after every message queued before the stop. ctx.Self()
// is nil in OnStop.
type Stopper interface {
	OnStop(ctx *Context) error
}

// ErrorHandler receives the errors and recovered panics of the other hooks.
// Without it they are logged. A panic in OnError is logged and ignored.
type ErrorHandler interface {
	OnError(ctx *Context, err error)
}

// ConnectHandler is told when a connection to a remote env is established
// (Spark's onConnected). Every endpoint of the env is told.
type ConnectHandler interface {
	OnConnected(ctx *Context, addr RpcAddress) error
}

// DisconnectHandler is told when the connection to a remote env closed.
// An env's own Shutdown does not deliver it to its own endpoints.
type DisconnectHandler interface {
	OnDisconnected(ctx *Context, addr RpcAddress) error
}

// NetworkErrorHandler is told of an error on the connection to a remote env.
type NetworkErrorHandler interface {
	OnNetworkError(ctx *Context, err error, addr RpcAddress) error
}

// Isolated is implemented by endpoints that want a dedicated message loop
// instead of the env's shared one (Spark's IsolatedRpcEndpoint). With a
// thread count of 1 the endpoint is served serially by its own goroutine, so a
// blocking handler does not hold up other endpoints. With a count above 1 its
// Receive and ReceiveAndReply run concurrently on that many goroutines, in no
// particular order; OnStart still runs alone and first and OnStop alone and
// last.
type Isolated interface {
	ThreadCount() int
}

// Context is an endpoint's view of itself and its env. One Context lives as
// long as the endpoint; it is passed to every hook.
type Context struct {
	cell *cell
	peer string // see Peer; set while a PeerAware endpoint handles a one-way message
}

// Self returns the endpoint's own reference. It is valid from OnStart on and
// nil in OnStop and after.
func (c *Context) Self() *Ref { return c.cell.self.Load() }

// Env returns the env the endpoint is registered to.
func (c *Context) Env() *Env { return c.cell.env }

// Name returns the endpoint's name.
func (c *Context) Name() string { return c.cell.name }

// Logger returns the endpoint's logger (with its env and name as fields).
func (c *Context) Logger() *zerolog.Logger { return &c.cell.log }

// Stop stops the endpoint (Spark's RpcEndpoint.stop): OnStop runs after the
// messages already queued. It does not wait.
func (c *Context) Stop() error { return c.cell.env.stopCell(c.cell) }

// CallContext is passed to ReceiveAndReply: Spark's RpcCallContext. Reply and
// SendFailure may be called later, from any goroutine; only the first of them
// counts, later calls are logged and ignored.
type CallContext struct {
	*Context
	sender  *protoactor.PID // reply-to for remote and protoactor asks
	fut     *Future         // local sparkrpc ask
	replied atomic.Bool
}

// Reply answers the ask with msg. A nil msg fails the asker with ErrNilMessage.
func (c *CallContext) Reply(msg proto.Message) {
	if isNilMessage(msg) {
		c.SendFailure(ErrNilMessage)
		return
	}
	if !c.replied.CompareAndSwap(false, true) {
		c.cell.log.Debug().Str("reply", string(msg.ProtoReflect().Descriptor().FullName())).Msg("ignored a second reply")
		return
	}
	if c.fut != nil {
		c.fut.complete(msg, nil)
		return
	}
	c.cell.env.reply(c.sender, msg)
}

// SendFailure fails the ask with err; the asker's Wait returns it (as a
// *RemoteError when the asker is on another env).
func (c *CallContext) SendFailure(err error) {
	if !c.replied.CompareAndSwap(false, true) {
		c.cell.log.Debug().Err(err).Msg("ignored a failure after the reply")
		return
	}
	if c.fut != nil {
		c.fut.completeFrom(nil, err, true)
		return
	}
	c.cell.env.reply(c.sender, FailureToProto(err))
}

// SenderIdentity returns the identity of the asker's env as its
// transport knows it ("host:port" of a listening env, the client id of an
// env in client mode): what a transport's per-peer facts, such as the key a
// peer authenticated with, are looked up by. It is "" for a local ask.
func (c *CallContext) SenderIdentity() string {
	if c.fut != nil || c.sender == nil || c.sender.Address == c.cell.env.identity {
		return ""
	}
	return c.sender.Address
}

// SenderAddress returns the asker's address: its env's listen address, or
// the socket address of its connection when it does not listen. It is the
// zero RpcAddress for a local ask on an env without an address.
func (c *CallContext) SenderAddress() RpcAddress {
	if c.fut != nil || c.sender == nil {
		return c.cell.env.Address()
	}
	return c.cell.env.peerAddress(c.sender.Address)
}
