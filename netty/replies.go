// Replies read from a connection: bound to the asks that went to its peer.

package netty

import (
	"fmt"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// A frame without a sender whose target starts with "future$" is a reply.
// The reader hands it to the ask the env has pending under that id only if
// the ask went to this connection's peer (c.info.Identity, which the
// handshake set; actor.TransportHost.LookupReply): a reply from any other
// connection is dropped undecoded, counted (Stats.ForgedReplies) and logged
// at most once per forgedReplyLogInterval. Since the asks pending on a peer
// fail when its connection closes (also when a reconnect replaces it), a
// pending ask is answered over the connection it went out on, or not at
// all. Reply-to ids are random besides, so a peer cannot name an ask it
// was not sent.
//
// A reply of a type its ask does not take (actor.AskAs binds one) is not
// decoded either: the ask fails with an RpcFailure of code DECODE that
// names both types.

// forgedReplyLogInterval is the least time between two log lines about
// replies dropped because they came from the wrong connection.
const forgedReplyLogInterval = time.Minute

// handleReply routes the reply e to its ask.
func (c *conn) handleReply(e envelope) {
	t := c.t
	r, st := t.host.LookupReply(c.info.Identity, e.target)
	switch st {
	case actor.ReplyWrongPeer:
		t.forgedReplies.Add(1)
		t.logForgedReply(c, e)
		return
	case actor.ReplyNotPending:
		// The ask has completed (timed out, aborted) or never was: the
		// payload is not decoded.
		t.log.Debug().Str("to", string(e.target)).Str("peer", c.info.Identity).Msg("Ignored a reply to an ask that is not pending")
		return
	}
	mt, err := c.messageType(e.typ)
	if err == nil && !r.Accepts(mt.name) {
		t.refusedTypes.Add(1)
		err = &RefusedTypeError{Type: string(mt.name), Target: string(e.target), From: c.info.Identity}
	}
	var msg proto.Message
	if err == nil {
		msg, err = mt.decode(e.payload)
	}
	if err != nil {
		t.log.Warn().Str("type", string(e.typ)).Str("to", string(e.target)).Err(err).Msg("cannot decode reply")
		msg = &messages.RpcFailure{
			Code:    messages.ErrorCode_ERROR_CODE_DECODE,
			Message: fmt.Sprintf("Cannot decode reply of type %s from %s: %v", e.typ, c.info.Identity, err),
			Type:    "netty.DecodeError",
		}
	}
	r.Complete(msg)
}

// logForgedReply logs a reply dropped because its ask went to another
// peer, unless one was logged less than forgedReplyLogInterval ago.
func (t *Transport) logForgedReply(c *conn, e envelope) {
	if !t.forgedLog.allowEvery(forgedReplyLogInterval) {
		return
	}
	ev := t.log.Warn().Str("peer", c.info.Identity).Str("to", string(e.target)).Int64("dropped", t.forgedReplies.Load())
	if c.nc != nil {
		ev = ev.Str("remote", c.nc.RemoteAddr().String())
	}
	ev.Msg("dropped a reply to an ask that went to another peer (logged at most once a minute)")
}
