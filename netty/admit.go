// Which frames are decoded: only those whose target is there and takes their type.

package netty

import (
	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// A frame is decoded only once its target is found and has said it takes
// the frame's type: the payload of a frame for a name that runs no
// endpoint is never decoded (the asker gets "not found", a one-way message
// is counted as dropped, by actor.TransportHost.NoEndpoint), nor that of a
// frame whose type the endpoint does not accept (actor.Acceptor,
// actor.Router): the asker fails with a *RefusedTypeError (code
// UNSUPPORTED_MESSAGE), a one-way message is counted as dropped, both
// through TransportHost.Undeliverable, and Stats.RefusedTypes counts them.
// The type an endpoint accepted last is kept with its target, so a stream
// of one type asks the endpoint once. Replies are admitted by their ask
// (replies.go); every decode is within the decode bound (decodelimit.go).

// admit reports whether a frame of type mt from sender (nil for a one-way
// message) for tg is to be decoded and delivered. When not, it has
// answered or dropped it. The reader calls it unless tg's inbox is known
// and accepted mt last time.
func (c *conn) admit(tg *target, sender *protoactor.PID, mt *messageType) bool {
	if tg.inbox == nil {
		tg.inbox = c.t.host.Inbox(tg.pid.Id)
	}
	if tg.inbox == nil {
		c.flush() // what was read before is handed on first
		return !c.t.host.NoEndpoint(tg.pid, sender, mt.name)
	}
	if !tg.inbox.Accepts(mt.name) {
		c.flush()
		c.refuse(tg.pid, sender, mt)
		return false
	}
	tg.accepted = mt
	return true
}

// refuse answers (or drops) a message of a type its endpoint does not take.
func (c *conn) refuse(target, sender *protoactor.PID, mt *messageType) {
	t := c.t
	t.refusedTypes.Add(1)
	err := &RefusedTypeError{Type: string(mt.name), Target: target.Id, From: c.info.Identity}
	t.host.Undeliverable(target, sender, &messages.WireEnvelope{Target: target.Id, Type: string(mt.name)}, err)
}
