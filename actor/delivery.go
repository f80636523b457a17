// Delivery: inbound messages to endpoints and asks, replies to askers, and drop accounting.

package actor

import (
	"fmt"
	"strings"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

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

// deliver hands an inbound message to its endpoint, future or protoactor
// process (see TransportHost.Deliver).
//
// A reply to an ask (no sender, a "future$" target) is not delivered here:
// a transport hands it to LookupReply, which checks the peer it came from.
func (e *Env) deliver(target *protoactor.PID, in Inbound) {
	sender, msg := in.Sender, in.Msg
	if sender == nil && isFutureID(target.Id) {
		e.log.Debug().Str("to", target.Id).Msg("Ignored a reply that is not bound to its ask's peer")
		return
	}
	if c := e.runningCell(target.Id); c != nil {
		if name := msg.ProtoReflect().Descriptor().FullName(); c.accepts != nil && !c.accepts(name) {
			// As a transport refuses it before it decodes (Acceptor), so
			// that an endpoint's Accepts holds whatever the transport.
			e.undeliverable(target, sender, msg, fmt.Errorf("%w: %s does not take %s from other envs", ErrUnsupportedMessage, target.Id, name))
			return
		}
		c.postInbound(in)
		return
	}
	if p, ok := e.localProcess(target.Id); ok {
		if _, isCell := p.(*cell); !isCell {
			p.SendUserMessage(target, protoactorMessage(sender, msg)) // a protoactor future or actor
			return
		}
	}
	if e.stopped.Load() {
		if sender != nil {
			e.reply(sender, FailureToProto(ErrEnvStopped))
		}
		return
	}
	if sender != nil {
		e.replyNotFound(sender, target.Id)
		return
	}
	e.dropped(target.Id, msg)
}

// noEndpoint handles a message for target that runs no endpoint without
// its payload, as deliver would, or returns false when deliver must have
// the message (see TransportHost.NoEndpoint).
func (e *Env) noEndpoint(target, sender *protoactor.PID, typ protoreflect.FullName) bool {
	if e.runningCell(target.Id) != nil {
		return false
	}
	if p, ok := e.localProcess(target.Id); ok {
		if _, isCell := p.(*cell); !isCell {
			return false
		}
	}
	switch {
	case e.stopped.Load():
		if sender != nil {
			e.reply(sender, FailureToProto(ErrEnvStopped))
		}
	case sender != nil:
		e.replyNotFound(sender, target.Id)
	default:
		e.dropped(target.Id, &messages.WireEnvelope{Target: target.Id, Type: string(typ)})
	}
	return true
}

// deliverReply hands msg, a reply or an RpcFailure, to the pending remote
// ask whose reply-to PID has the id id, and reports whether there was one.
// It takes the id as bytes too (as a transport decodes it), so that routing
// a reply allocates nothing.
func deliverReply[S string | []byte](e *Env, id S, msg proto.Message) bool {
	f := lookupFuture(e, id)
	if f == nil {
		return false
	}
	f.receive(msg)
	return true
}

// lookupFuture returns the pending remote ask whose reply-to id is id.
func lookupFuture[S string | []byte](e *Env, id S) *Future {
	n, ok := parseFutureID(id)
	if !ok {
		return nil
	}
	if f := e.futures.lookup(n); f != nil && f.peer != "" {
		return f // a local ask is never answered through its id
	}
	return nil
}

// undeliverable fails the asker of a message that could not be sent, or
// counts a one-way message as dropped (see TransportHost.Undeliverable).
func (e *Env) undeliverable(target, sender *protoactor.PID, msg proto.Message, err error) {
	if sender == nil {
		// Counted like a drop, logged with its true cause (at most one
		// line per interval: a connection may lose many at once).
		e.countDropped(target.Id, msg)
		e.dropLog.log(&e.log, target, err)
		return
	}
	if sender.Address == e.identity {
		if f := lookupFuture(e, sender.Id); f != nil {
			f.complete(nil, err)
			return
		}
		if p, ok := e.localProcess(sender.Id); ok {
			if f, ok := p.(*Future); ok {
				f.complete(nil, err)
				return
			}
			p.SendUserMessage(sender, FailureToProto(err))
		}
		return
	}
	// A reply to a remote asker that could not be sent: tell the asker why.
	if _, isFailure := msg.(*messages.RpcFailure); !isFailure {
		_ = e.sendRemote(sender, nil, FailureToProto(err))
	}
}

func (e *Env) failPending(peer string, err error) {
	for _, f := range e.futures.pending(func(f *Future) bool { return f.peer == peer }) {
		f.complete(nil, err)
	}
}

// protoactorMessage is what a protoactor process that is not an endpoint
// gets for msg from sender: msg itself, or for an ask the envelope that
// carries its sender.
func protoactorMessage(sender *protoactor.PID, msg proto.Message) any {
	if sender == nil {
		return msg
	}
	return &protoactor.MessageEnvelope{Message: msg, Sender: sender}
}
