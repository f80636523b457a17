// A running endpoint's queue as a transport reaches it: the Inbox of
// TransportHost.Inbox, and the lookup and post that Deliver shares with it.

package actor

import (
	"reflect"
	"sync/atomic"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// inbox is the Inbox of one endpoint. It refers to the endpoint's cell only
// until the endpoint stops, so that a transport that keeps it (one per
// target, for as long as a connection lives) keeps no stopped endpoint in
// memory.
type inbox struct {
	c atomic.Pointer[cell]
}

func newInbox(c *cell) *inbox {
	in := &inbox{}
	in.c.Store(c)
	return in
}

// Post queues in as Deliver would for a running endpoint, and reports
// false once the endpoint is stopping.
func (in *inbox) Post(m Inbound) bool {
	c := in.c.Load()
	if c == nil || c.stopping.Load() {
		return false
	}
	c.postInbound(m)
	return true
}

// Accepts reports whether the endpoint takes messages of the type name
// (Acceptor): any type when it does not say, or once it has stopped.
func (in *inbox) Accepts(name protoreflect.FullName) bool {
	c := in.c.Load()
	return c == nil || c.accepts == nil || c.accepts(name)
}

// PostBatch queues every message of batch as Post would, under one lock,
// and reports false, queueing none, once the endpoint is stopping.
func (in *inbox) PostBatch(batch []Inbound) bool {
	c := in.c.Load()
	if c == nil || c.stopping.Load() {
		return false
	}
	c.mb.postInbound(batch, c.peers)
	return true
}

// runningCell returns the cell of the endpoint registered as name, unless
// there is none or it is stopping.
func (e *Env) runningCell(name string) *cell {
	if v, ok := e.endpoints.Load(name); ok {
		if c := v.(*cell); !c.stopping.Load() {
			return c
		}
	}
	return nil
}

// postInbound queues in.Msg (not deferred) to c as a transport delivers it.
func (c *cell) postInbound(in Inbound) {
	from := ""
	if c.peers && in.Sender == nil {
		from = peerOf(in.From)
	}
	c.mb.postCountedFrom(inboundMessage(in.Sender, in.Msg), reflect.TypeOf(in.Msg), from)
}

// inboundMessage is what an endpoint's mailbox queues for msg from sender:
// msg itself, or for an ask the inboundAsk that carries its sender.
func inboundMessage(sender *protoactor.PID, msg proto.Message) any {
	if sender == nil {
		return msg
	}
	return &inboundAsk{req: msg, call: CallContext{sender: sender}}
}

// inboundAsk is an ask from another env (or from plain protoactor code) as
// its endpoint's mailbox queues it: the request, and the CallContext that
// its handler gets, in one allocation. The handler may keep the CallContext
// to reply later; it then keeps the request too.
type inboundAsk struct {
	req  proto.Message
	call CallContext
}

// close lets the endpoint go: later Posts report false.
func (in *inbox) close() { in.c.Store(nil) }
