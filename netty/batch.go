// The reader's batch: the messages read for one endpoint, posted to its
// inbox together.

package netty

import "github.com/sparkrpc/sparkrpc/actor"

// maxBatch is the most messages the reader holds for an endpoint before it
// posts them.
const maxBatch = 32

// post hands msg from sender to tg. While the frames read keep going to
// one running endpoint, the reader collects them and posts them with one
// Inbox.PostBatch: one lock of the endpoint's queue and one wake-up of its
// loop instead of one per message. Messages for another target, or for a
// name that runs no endpoint, first post the batch, so that what the
// connection delivers keeps its order.
func (c *conn) post(tg *target, in actor.Inbound) {
	if tg != c.batchTo {
		c.flush()
		if tg.inbox == nil {
			tg.inbox = c.t.host.Inbox(tg.pid.Id)
		}
		if tg.inbox == nil {
			c.deliver(tg, in)
			return
		}
		c.batchTo = tg
	}
	c.batch = append(c.batch, in)
	if len(c.batch) == maxBatch {
		c.flush()
	}
}

// flush posts the batch. The reader flushes before anything else it hands
// on (a reply, a failure, the marks of the flow window), before a read
// that may wait for the socket, and before it returns: a message it has
// read never waits for the next one.
func (c *conn) flush() {
	tg := c.batchTo
	if tg == nil {
		return
	}
	c.batchTo = nil
	var posted bool
	if len(c.batch) == 1 && c.batch[0].Deferred == nil {
		// A lone message (an ask with one in flight): Post is the same
		// without the batch's loop.
		posted = tg.inbox.Post(c.batch[0])
	} else {
		posted = tg.inbox.PostBatch(c.batch)
	}
	if !posted {
		// The endpoint is stopping: the host finds whatever runs under
		// its name now, message by message, as for any other target.
		tg.inbox = nil
		for _, in := range c.batch {
			c.deliver(tg, in)
		}
	}
	clear(c.batch) // keep no message alive
	c.batch = c.batch[:0]
}

// deliver hands in to the host's Deliver, which finds the endpoint that
// runs under tg's name now, if any. A deferred message is decoded first.
func (c *conn) deliver(tg *target, in actor.Inbound) {
	msg := in.Msg
	if in.Deferred != nil {
		var ok bool
		if msg, ok = in.Deferred.Decode(); !ok {
			return
		}
	}
	c.t.host.Deliver(tg.pid, actor.Inbound{Sender: in.Sender, Msg: msg, From: in.From})
}
