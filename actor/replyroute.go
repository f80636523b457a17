// Routing a transport's replies to the asks they answer, bound to the peer each ask went to.

package actor

import (
	"strings"
	"sync"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A reply is bound to the peer its ask went to: TransportHost.LookupReply
// finds the pending ask of a reply-to id only for the peer identity the
// request was sent to. A transport passes the identity of the connection
// the reply arrived on (never a field of the frame), so that a reply from
// any other connection finds nothing (ReplyWrongPeer). The asks pending on
// a peer fail when its connection closes, so a pending ask is always
// answered over the connection it went out on. Reply-to ids are random
// (futureRegistry.add): a peer learns no other peer's ids from its own.

// ReplyStatus is what TransportHost.LookupReply found for a reply.
type ReplyStatus uint8

const (
	// ReplyPending: the ask is pending and went to the peer the reply
	// came from.
	ReplyPending ReplyStatus = iota
	// ReplyNotPending: no ask of this env is pending under the id (it has
	// completed, timed out, or never was).
	ReplyNotPending
	// ReplyWrongPeer: the ask went to another peer. The reply is forged
	// or misrouted; the transport drops and counts it.
	ReplyWrongPeer
)

// rpcFailureName is the type of a failure, which every ask accepts.
var rpcFailureName = (*messages.RpcFailure)(nil).ProtoReflect().Descriptor().FullName()

// PendingReply is a pending ask as a transport sees it, once
// TransportHost.LookupReply has found it for the peer a reply came from:
// what reply type it accepts, and how the reply completes it. Its zero
// value stands for no ask.
type PendingReply struct {
	f *Future
	// A plain protoactor future (RequestFuture to a remote PID): its
	// process and PID.
	p    protoactor.Process
	pid  *protoactor.PID
	fn   func(proto.Message) // see PendingReplyFunc
	want protoreflect.FullName
}

// PendingReplyFunc returns a PendingReply that fn completes, of an ask that
// takes replies of the type want ("" for any) and failures: for a
// TransportHost other than an env's (a transport's tests, say).
func PendingReplyFunc(want protoreflect.FullName, fn func(proto.Message)) PendingReply {
	return PendingReply{fn: fn, want: want}
}

// Accepts reports whether the ask takes a reply of the message type name
// (a transport checks it before it decodes the reply): the type the asker
// expects (AskAs), any type when it expects none, and RpcFailure always.
func (r PendingReply) Accepts(name protoreflect.FullName) bool {
	want := r.want
	if r.f != nil {
		want = r.f.want
	}
	return want == "" || name == want || name == rpcFailureName
}

// Complete completes the ask with msg, a reply or an RpcFailure.
func (r PendingReply) Complete(msg proto.Message) {
	switch {
	case r.f != nil:
		r.f.receive(msg)
	case r.p != nil:
		r.p.SendUserMessage(r.pid, msg)
	case r.fn != nil:
		r.fn(msg)
	}
}

// lookupReply returns the pending remote ask whose reply-to id is id, if
// the peer from is the one it went to (see TransportHost.LookupReply).
func lookupReply[S string | []byte](e *Env, from string, id S) (PendingReply, ReplyStatus) {
	n, ok := parseFutureID(id)
	if !ok {
		return e.paReplies.take(e, from, string(id))
	}
	f := e.futures.lookup(n)
	if f == nil || f.peer == "" {
		return PendingReply{}, ReplyNotPending // a local ask is never answered through its id
	}
	if f.peer != from {
		return PendingReply{}, ReplyWrongPeer
	}
	return PendingReply{f: f}, ReplyPending
}

// paReplyLimit bounds the plain protoactor asks to remote PIDs whose
// replies are awaited (paReplies): an ask that never gets its reply
// (protoactor's futures time out without telling the env) stays until the
// table is full, and is then forgotten.
const paReplyLimit = 1 << 14

// paReplies binds the reply-to ids of plain protoactor futures (protoactor's
// "future$" ids, which are sequential) to the peer their request went to, as
// Future.peer does for sparkrpc's asks: a reply from any other peer is
// refused.
type paReplies struct {
	mu sync.Mutex
	m  map[string]string // future id -> peer identity
}

// bind records that the protoactor future id awaits a reply from peer.
func (r *paReplies) bind(id, peer string) {
	r.mu.Lock()
	if r.m == nil || len(r.m) >= paReplyLimit {
		r.m = make(map[string]string)
	}
	r.m[id] = peer
	r.mu.Unlock()
}

// take returns the protoactor future id awaiting a reply from the peer from,
// and forgets it: a protoactor future takes one reply.
func (r *paReplies) take(e *Env, from, id string) (PendingReply, ReplyStatus) {
	r.mu.Lock()
	peer, ok := r.m[id]
	if ok && peer == from {
		delete(r.m, id)
	}
	r.mu.Unlock()
	switch {
	case !ok:
		return PendingReply{}, ReplyNotPending
	case peer != from:
		return PendingReply{}, ReplyWrongPeer
	}
	p, found := e.localProcess(id)
	if !found {
		return PendingReply{}, ReplyNotPending
	}
	return PendingReply{p: p, pid: protoactor.NewPID(e.identity, id)}, ReplyPending
}

// isProtoactorFutureID reports whether id is the id of a plain protoactor
// future, not one of sparkrpc's asks.
func isProtoactorFutureID(id string) bool {
	return strings.HasPrefix(id, "future$") && !strings.HasPrefix(id, futureIDPrefix)
}
