// Messages that a transport posts undecoded, decoded on the endpoint's loop.

package actor

import protoactor "github.com/asynkron/protoactor-go/actor"

// deferredInbound is a Deferred message as its endpoint's mailbox queues
// it, with the inboundAsk it becomes, in the same allocation, when it is
// an ask.
type deferredInbound struct {
	d   Deferred
	ask inboundAsk
}

// newDeferredInbound returns what the mailbox queues for d from sender
// (nil for a one-way message).
func newDeferredInbound(sender *protoactor.PID, d Deferred) *deferredInbound {
	return &deferredInbound{d: d, ask: inboundAsk{call: CallContext{sender: sender}}}
}

// receiveDeferred decodes m and handles the message as receive or
// receiveAsk does; a message that cannot be decoded was reported by its
// transport and is not handled.
func (c *cell) receiveDeferred(m *deferredInbound) {
	msg, ok := m.d.Decode()
	m.d = nil
	switch {
	case !ok:
	case m.ask.call.sender == nil:
		c.receive(msg, nil)
	default:
		m.ask.req = msg
		c.receiveAsk(&m.ask)
	}
}
