// Large messages lent to the endpoints that borrow them (actor.Borrower):
// decoded so that they alias the pooled chunk their frame was read into,
// which goes back to its pool once every reference to it is released.

package netty

import (
	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
)

// A large message (a frame larger than the reader's buffer and at most
// largeFrame) is read into a pooled chunk and posted undecoded
// (deferred.go). For an endpoint that borrows messages, its loop calls
// Lend rather than Decode: vtprotobuf's UnmarshalVTUnsafe decodes it
// without copying its bytes and strings, so it touches no new memory, and
// the chunk stays out of its pool until the handler has returned and every
// reference the handler retained is released. At 64 KiB the copy into new
// memory was the whole of sparkrpc's gap to raw TCP (docs/performance.md,
// "The floor at 1 KiB and 64 KiB").
//
// What a peer can make this side hold stays bounded: the flow control
// counts the chunk until the handler has returned, as for any large
// message, and a connection lends at most spark.rpc.io.maxLentBytesPerConnection
// bytes of chunks at once; past it, messages are decoded into memory of
// their own (so a retained message never stops the reader, and an endpoint
// that retains many messages still gets every one).

// Lend implements actor.Lender: it decodes the payload so that the message
// aliases the chunk, and returns p as the chunk's Loan with one reference.
// A type without vtprotobuf's unsafe decoder, or a connection with as much
// lent as it may, gets the message decoded as Decode does, and no Loan.
func (p *pendingDecode) Lend() (proto.Message, actor.Loan, bool) {
	c, size := p.c, int64(cap(p.chunk))
	if !p.mt.lends {
		msg, ok := p.Decode()
		return msg, nil, ok
	}
	if c.lent.Add(size) > c.t.maxLentB {
		c.lent.Add(-size)
		msg, ok := p.Decode()
		return msg, nil, ok
	}
	msg, err := p.mt.lend(p.payload)
	if err != nil {
		c.lent.Add(-size)
		msg, ok := p.Decode() // fails as the decode did, and reports it
		return msg, nil, ok
	}
	c.t.lentBuffers.Add(1)
	c.t.lentBytes.Add(size)
	p.refs.Store(1)
	return msg, p, true
}

// Retain implements actor.Loan.
func (p *pendingDecode) Retain() {
	if p.refs.Add(1) <= 1 {
		panic("netty: a lent message retained after its release")
	}
}

// Release implements actor.Loan: the last release returns the chunk to its
// pool (or, with spark.rpc.io.poisonReleasedBuffers, overwrites it with
// poison and leaves it to the collector, so that the poison stays) and p
// to its own.
func (p *pendingDecode) Release() {
	switch n := p.refs.Add(-1); {
	case n > 0:
		return
	case n < 0:
		panic("netty: a lent message released more often than retained")
	}
	c, t, size := p.c, p.c.t, int64(cap(p.chunk))
	raceReleased(p.chunk)
	c.lent.Add(-size)
	t.lentBuffers.Add(-1)
	t.lentBytes.Add(-size)
	if t.poison {
		// p is not reused either, so that a second Release panics.
		poison(p.chunk[:cap(p.chunk)])
		p.c, p.mt, p.target, p.sender, p.chunk, p.payload = nil, nil, nil, nil, nil, nil
		return
	}
	recycleChunk(p.chunk)
	p.c, p.mt, p.target, p.sender, p.chunk, p.payload = nil, nil, nil, nil, nil, nil
	pendingDecodes.Put(p)
}

// poisonPattern is what poison writes over a released chunk: bytes that
// read as an implausible length, tag or text wherever they are found.
var poisonPattern = [4]byte{0xde, 0xad, 0xbe, 0xef}

// poison overwrites b with poisonPattern.
func poison(b []byte) {
	for i := range b {
		b[i] = poisonPattern[i&3]
	}
}
