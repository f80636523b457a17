// The env as its transport sees it: transportSink, the TransportHost behind every transport.

package actor

import (
	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// transportSink is the TransportHost of an env: what its transport calls.
// It keeps the transport's plumbing out of Env's method set; each method is
// a direct call into the env.
type transportSink struct{ e *Env }

var _ TransportHost = transportSink{}

func (s transportSink) Conf() *Conf            { return s.e.conf }
func (s transportSink) Logger() zerolog.Logger { return s.e.baseLog }

func (s transportSink) Deliver(target, sender *protoactor.PID, msg proto.Message) {
	s.e.deliver(target, sender, msg)
}

func (s transportSink) DeliverReply(id []byte, msg proto.Message) bool {
	return deliverReply(s.e, id, msg)
}

func (s transportSink) Connected(peer Peer) {
	s.e.postToAll(&netEvent{kind: netConnected, addr: peer.Address})
}

func (s transportSink) Disconnected(peer Peer, cause error) { s.e.disconnected(peer, cause) }

func (s transportSink) NetworkError(peer Peer, err error) {
	s.e.postToAll(&netEvent{kind: netError, addr: peer.Address, err: err})
}

func (s transportSink) Undeliverable(target, sender *protoactor.PID, msg proto.Message, err error) {
	s.e.undeliverable(target, sender, msg, err)
}

func (s transportSink) AfterProcessed(target *protoactor.PID, fn func()) {
	s.e.afterProcessed(target, fn)
}

func (s transportSink) PendingAsks(peer string) (n int, newest uint64) {
	return s.e.pendingAsks(peer)
}

// deliver hands an inbound message to its endpoint, future or protoactor
// process (see TransportHost.Deliver).
func (e *Env) deliver(target, sender *protoactor.PID, msg proto.Message) {
	if sender == nil && deliverReply(e, target.Id, msg) {
		return
	}
	var m any = msg
	if sender != nil {
		m = &protoactor.MessageEnvelope{Message: msg, Sender: sender}
	}
	if v, ok := e.endpoints.Load(target.Id); ok {
		if c := v.(*cell); !c.stopping.Load() {
			c.post(m)
			return
		}
	}
	if p, ok := e.localProcess(target.Id); ok {
		if _, isCell := p.(*cell); !isCell {
			p.SendUserMessage(target, m) // a protoactor future or actor
			return
		}
	}
	if sender == nil && isFutureID(target.Id) {
		// A reply to an ask that has completed (timed out, aborted): not a
		// message dropped by a stopped endpoint.
		e.log.Debug().Str("to", target.Id).Msg("Ignored a reply to an ask that has completed")
		return
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

// disconnected fails every ask pending on peer and tells every endpoint.
func (e *Env) disconnected(peer Peer, cause error) {
	addr := peer.Address.String()
	if addr == "" {
		addr = peer.Identity
	}
	e.failPending(peer.Identity, &ConnectionClosedError{Addr: addr, Cause: cause})
	e.postToAll(&netEvent{kind: netDisconnected, addr: peer.Address})
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

// processedMark is queued behind the messages delivered to an endpoint; the
// endpoint's loop runs it when it reaches it.
type processedMark func()

// afterProcessed runs fn once the local endpoint whose name is target.Id
// has processed every message delivered to it before this call (see
// TransportHost.AfterProcessed).
func (e *Env) afterProcessed(target *protoactor.PID, fn func()) {
	if v, ok := e.endpoints.Load(target.Id); ok {
		if c := v.(*cell); !c.stopping.Load() {
			c.post(processedMark(fn))
			return
		}
	}
	fn()
}

// pendingAsks counts the asks waiting for a reply from peer (see
// TransportHost.PendingAsks).
func (e *Env) pendingAsks(peer string) (n int, newest uint64) {
	r := e.futures
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		for id, f := range s.m {
			if f.peer == peer && f.state.Load() == 0 {
				n++
				newest = max(newest, id)
			}
		}
		s.mu.Unlock()
	}
	return n, newest
}
