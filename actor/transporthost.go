// The env as its transport sees it: transportSink, the TransportHost behind every transport.

package actor

import (
	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// transportSink is the TransportHost of an env: what its transport calls.
// It keeps the transport's plumbing out of Env's method set; each method is
// a direct call into the env.
type transportSink struct{ e *Env }

var _ TransportHost = transportSink{}

func (s transportSink) Conf() *Conf            { return s.e.conf }
func (s transportSink) Logger() zerolog.Logger { return s.e.baseLog }

func (s transportSink) Deliver(target *protoactor.PID, in Inbound) { s.e.deliver(target, in) }

func (s transportSink) NoEndpoint(target, sender *protoactor.PID, typ protoreflect.FullName) bool {
	return s.e.noEndpoint(target, sender, typ)
}

func (s transportSink) Inbox(id string) Inbox {
	if c := s.e.runningCell(id); c != nil {
		return c.in
	}
	return nil // not a nil *inbox: an Inbox that is nil
}

func (s transportSink) LookupReply(from string, id []byte) (PendingReply, ReplyStatus) {
	return lookupReply(s.e, from, id)
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

// disconnected fails every ask pending on peer and tells every endpoint.
func (e *Env) disconnected(peer Peer, cause error) {
	addr := peer.Address.String()
	if addr == "" {
		addr = peer.Identity
	}
	e.failPending(peer.Identity, &ConnectionClosedError{Addr: addr, Cause: cause})
	e.postToAll(&netEvent{kind: netDisconnected, addr: peer.Address})
}

// processedMark is queued behind the messages delivered to an endpoint; the
// endpoint's loop runs it when it reaches it.
type processedMark func()

// afterProcessed runs fn once the local endpoint whose name is target.Id
// has processed every message delivered to it before this call (see
// TransportHost.AfterProcessed).
func (e *Env) afterProcessed(target *protoactor.PID, fn func()) {
	if c := e.runningCell(target.Id); c != nil {
		c.post(processedMark(fn))
		return
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
		for _, f := range s.m {
			if f.peer == peer && f.state.Load() == 0 {
				n++
				newest = max(newest, f.seq)
			}
		}
		s.mu.Unlock()
	}
	return n, newest
}
