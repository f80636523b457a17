// Messages that the endpoint's loop decodes, not the connection's reader.

package netty

import (
	"reflect"
	"sync"
	"sync/atomic"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"
)

// A frame larger than the reader's buffer (and at most largeFrame) is read
// into a pooled chunk, and its message is posted undecoded, as an
// actor.Deferred that holds the chunk: the endpoint's loop copies the
// payload into the message's own memory while the reader reads the next
// frame, rather than the reader before it does. At 64 KiB that copy writes
// memory new to the process (the collector's scavenger has returned what
// earlier messages freed) and was the reader's largest cost
// (docs/performance.md, "Before and after: large frames decoded on the
// endpoint's loop"). The flow control counts the chunk's size, the memory
// such a message holds until it is decoded.

// pendingDecode is a message read and not yet decoded: its frame's chunk,
// its payload within it, and what reports a failure to decode it.
type pendingDecode struct {
	c              *conn
	mt             *messageType
	target, sender *protoactor.PID
	chunk, payload []byte
	// refs counts the references to the chunk once it is lent (lend.go):
	// 0 until then, and again once the last is released.
	refs atomic.Int32
}

// pendingDecodes holds pendingDecodes that have been decoded, so that a
// large message costs no allocation beyond its own.
var pendingDecodes = sync.Pool{New: func() any { return new(pendingDecode) }}

// newPendingDecode returns the pending decode of payload, a message of
// type mt within chunk, from sender (nil for a one-way message) to target.
func newPendingDecode(c *conn, mt *messageType, target, sender *protoactor.PID, chunk, payload []byte) *pendingDecode {
	p := pendingDecodes.Get().(*pendingDecode)
	*p = pendingDecode{c: c, mt: mt, target: target, sender: sender, chunk: chunk, payload: payload}
	return p
}

// Decode implements actor.Deferred: it decodes the payload, returns the
// chunk and p to their pools, and fails the asker (or logs a one-way
// message) when the payload cannot be decoded, as the reader does. It is
// called once; p is not used after.
func (p *pendingDecode) Decode() (proto.Message, bool) {
	msg, err := p.mt.decode(p.payload)
	recycleChunk(p.chunk)
	c, mt, target, sender := p.c, p.mt, p.target, p.sender
	*p = pendingDecode{}
	pendingDecodes.Put(p)
	if err != nil {
		c.undecodable(target, sender, string(mt.mt.Descriptor().FullName()), err)
		return nil, false
	}
	return msg, true
}

// Type implements actor.Deferred.
func (p *pendingDecode) Type() reflect.Type { return p.mt.goType }
