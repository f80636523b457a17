// Messages that a transport posts undecoded, decoded on the endpoint's loop.

package actor

import protoactor "github.com/asynkron/protoactor-go/actor"

// deferredMessage is what an endpoint's mailbox queues for d from sender:
// d itself for a one-way message (cell.receive decodes it), or for an ask
// the deferredInbound that carries its sender.
func deferredMessage(sender *protoactor.PID, d Deferred) any {
	if sender == nil {
		return d
	}
	return &deferredInbound{d: d, ask: inboundAsk{call: CallContext{sender: sender}}}
}

// deferredInbound is a Deferred ask as its endpoint's mailbox queues it,
// with the inboundAsk it becomes, in the same allocation.
type deferredInbound struct {
	d   Deferred
	ask inboundAsk
}

// receiveDeferredAsk decodes the ask m and handles it as receiveAsk does;
// one that cannot be decoded was reported by its transport and is not
// handled.
func (c *cell) receiveDeferredAsk(m *deferredInbound) {
	msg, loan, ok := c.decode(m.d)
	m.d = nil
	switch {
	case !ok:
	case loan != nil:
		c.receiveLent(msg, loan, &m.ask)
	default:
		m.ask.req = msg
		c.receiveAsk(&m.ask)
	}
}
