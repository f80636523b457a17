// Router: typed handlers, one function per message type.

package actor

// This file holds the Router: typed handlers, one per message type, in place
// of an endpoint's type switch.

import (
	"fmt"
	"reflect"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Router is an endpoint made of typed handlers: one function per message
// type, registered with Handle (one-way messages, Spark's receive) and
// HandleAsk (asks, Spark's receiveAndReply). It implements Endpoint and
// Replier, so it can be registered as it is, returned by a constructor, or
// embedded in an endpoint type that adds the optional hooks (OnStart, OnStop,
// OnError, network events, ThreadCount) as methods of its own.
//
// A message of a type without a handler of the right kind is answered with
// ErrUnsupportedMessage, so the env fails the asker with "Unsupported message
// TYPE from ADDR" and passes the error to OnError, exactly as for an endpoint
// that returns it from a type switch. One type may have both a one-way and
// an ask handler: Receive uses the first, ReceiveAndReply the second; an ask
// of a type that has only a one-way handler is unsupported, and so is a
// one-way message of a type that has only an ask handler.
//
// Handlers are found with one map lookup keyed by the message's Go type, so
// a message matches the handler registered for its exact concrete type (for
// generated code, the pointer type such as *messages.CheckExistence).
// Dispatch allocates nothing of its own.
//
// The zero Router is empty and ready to use. Register every handler before
// the endpoint gets its first message: before RegisterEndpoint, or in
// OnStart, which runs first and alone. A Router must not be changed while it
// dispatches.
type Router struct {
	send map[reflect.Type]func(*Context, proto.Message) error
	ask  map[reflect.Type]func(*CallContext, proto.Message) error
	// names holds the full names of the types with a handler (Handles).
	names map[protoreflect.FullName]struct{}
}

var (
	_ Endpoint = (*Router)(nil)
	_ Replier  = (*Router)(nil)
)

// NewRouter returns an empty Router.
func NewRouter() *Router { return &Router{} }

// Handle registers fn as r's handler of one-way messages of type T (sent with
// Ref.Send). An error fn returns, or a panic in it, goes to the endpoint's
// OnError.
//
// Handle panics, as http.ServeMux does for a pattern registered twice, when
// T already has a one-way handler in r, when T is an interface type rather
// than a concrete message type, or when fn or r is nil: these are
// programming errors, found the first time the registration runs.
func Handle[T proto.Message](r *Router, fn func(ctx *Context, m T) error) {
	t := handlerType[T]("Handle", r, fn == nil)
	if _, dup := r.send[t]; dup {
		panic(fmt.Sprintf("actor: Handle: a one-way handler for %v is already registered", t))
	}
	if r.send == nil {
		r.send = make(map[reflect.Type]func(*Context, proto.Message) error)
	}
	r.send[t] = func(ctx *Context, m proto.Message) error { return fn(ctx, m.(T)) }
	r.addName(*new(T))
}

// addName records the full name of the type of m, a typed nil.
func (r *Router) addName(m proto.Message) {
	if r.names == nil {
		r.names = make(map[protoreflect.FullName]struct{})
	}
	r.names[m.ProtoReflect().Descriptor().FullName()] = struct{}{}
}

// Handles reports whether r has a handler (one-way or ask) for the message
// type of the full name name. A transport refuses, before decoding it, a
// message for a Router endpoint that it does not handle (see Acceptor).
func (r *Router) Handles(name protoreflect.FullName) bool {
	_, ok := r.names[name]
	return ok
}

// HandleAsk registers fn as r's handler of asks of type Req (Ref.Ask,
// AskSync, protoactor requests). The Resp that fn returns is the reply. An
// error fn returns, or a panic in it, fails the asker with that error and
// goes to OnError. A nil Resp (a typed nil such as (*T)(nil) too) with a nil
// error is a handler bug: it fails the asker with an error that matches
// ErrNilMessage (errors.Is, on the asker's env; over the wire it arrives as a
// *RemoteError with that text) and goes to OnError.
//
// fn answers before it returns. An endpoint that answers later, from another
// goroutine, implements ReceiveAndReply itself and uses CallContext.Reply.
//
// HandleAsk panics when Req already has an ask handler in r, when Req is an
// interface type rather than a concrete message type, or when fn or r is nil
// (see Handle).
func HandleAsk[Req, Resp proto.Message](r *Router, fn func(ctx *CallContext, m Req) (Resp, error)) {
	t := handlerType[Req]("HandleAsk", r, fn == nil)
	if _, dup := r.ask[t]; dup {
		panic(fmt.Sprintf("actor: HandleAsk: an ask handler for %v is already registered", t))
	}
	if r.ask == nil {
		r.ask = make(map[reflect.Type]func(*CallContext, proto.Message) error)
	}
	r.addName(*new(Req))
	r.ask[t] = func(ctx *CallContext, m proto.Message) error {
		resp, err := fn(ctx, m.(Req))
		if err != nil {
			return err
		}
		if isNilMessage(resp) {
			return fmt.Errorf("%w: the ask handler for %v returned a nil %v and no error", ErrNilMessage, t, reflect.TypeFor[Resp]())
		}
		ctx.Reply(resp)
		return nil
	}
}

// handlerType returns the Go type that keys T's handlers, after checking the
// registration's arguments.
func handlerType[T proto.Message](fn string, r *Router, nilHandler bool) reflect.Type {
	t := reflect.TypeFor[T]()
	switch {
	case r == nil:
		panic(fmt.Sprintf("actor: %s: nil Router", fn))
	case nilHandler:
		panic(fmt.Sprintf("actor: %s: nil handler for %v", fn, t))
	case t.Kind() == reflect.Interface:
		panic(fmt.Sprintf("actor: %s: %v is an interface; handlers are registered for a concrete message type such as *wrapperspb.StringValue", fn, t))
	}
	return t
}

// Receive calls the one-way handler registered for msg's type, or returns
// ErrUnsupportedMessage when there is none.
func (r *Router) Receive(ctx *Context, msg proto.Message) error {
	h, ok := r.send[reflect.TypeOf(msg)]
	if !ok {
		return ErrUnsupportedMessage
	}
	return h(ctx, msg)
}

// ReceiveAndReply calls the ask handler registered for msg's type and replies
// with its response, or returns ErrUnsupportedMessage when there is none.
func (r *Router) ReceiveAndReply(ctx *CallContext, msg proto.Message) error {
	h, ok := r.ask[reflect.TypeOf(msg)]
	if !ok {
		return ErrUnsupportedMessage
	}
	return h(ctx, msg)
}
