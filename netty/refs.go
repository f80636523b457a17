// Envelope references: a frame's target, sender id and type, sent once per
// connection and then named by a number.

package netty

import (
	"fmt"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
)

// A stream of small messages to one endpoint repeats the same envelope in
// every frame: the target's name, the sender's id and the message's type
// name are 33 of a 16-byte message's 63 bytes, and every byte is
// written, copied by the kernel twice and read again. So a sender defines
// an envelope's three names once per connection, in a control frame
// (refDefine, to creditTarget), and then writes only its number (the
// WireEnvelope's field ref):
//
//   - define (type refDefine): a varint, the reference (1 to maxRefs), and
//     the target's name, the sender's id and the type's name, each a varint
//     length and its bytes. A definition replaces any earlier one of the
//     same reference on the connection;
//   - a frame with a ref has no target, sender id or type of its own: they
//     are its definition's. A ref the connection has not defined breaks the
//     protocol.
//
// Only names that recur are defined: never a future's id (an ask's sender,
// a reply's target, each used once) nor the control target, and at most
// maxRefs envelopes of at most maxRefBytes per peer. A sender defines
// nothing before its peer has offered credit, so a peer that never offers
// never gets a definition. A sender's references belong to the peer (its
// outbox, whose frames may cross to the peer's next connection), so every
// definition is sent again at the start of each new connection, ahead of
// the frames it carries (and of that connection's offer, which a peer that
// offered before speaks this protocol to read).
const (
	refDefine   = "sparkrpc.ref.Define"
	maxRefs     = 256
	maxRefBytes = 512
)

// fieldRef is the WireEnvelope's field number of ref.
const fieldRef = 6

// envelopeRef is an envelope's three names and the reference a sender
// defined for them.
type envelopeRef struct {
	target, senderID, typ string
	ref                   uint64
}

// sendRefs are the references a peer's sender defined (p.mu held, save
// list, which dropFrames reads without it).
type sendRefs struct {
	ids  map[refKey]*envelopeRef
	mu   sync.Mutex // guards list for readers without p.mu
	list []*envelopeRef
}

// refKey is the map key of an envelope's names.
type refKey struct{ target, senderID, typ string }

// refFor sets h's reference, defining one (its definition queued in p's
// outbox) when the envelope is new to the peer and may have one, and
// resizes h for it. Called with p.mu held, for a message that is not a
// reply, once the peer's offer was read.
func (p *peer) refFor(ec *targetCredit, target string, h *envelopeHeader) {
	e := ec.ref
	if e == nil || e.senderID != h.senderID || e.typ != h.typ {
		if e = p.refs.define(p, target, h.senderID, h.typ); e == nil {
			return
		}
		ec.ref = e
	}
	h.ref = e.ref
	h.size = refEnvelopeSize(e.ref, h.psize)
}

// define returns the reference of an envelope's names, made (and its
// definition queued in p's outbox) when they have none, or nil when they
// may not have one.
func (s *sendRefs) define(p *peer, target, senderID, typ string) *envelopeRef {
	n := len(target) + len(senderID) + len(typ)
	if n > maxRefBytes || isFutureID(senderID) || isFutureID(target) || target == creditTarget {
		return nil // checked first: every ask has a future's id
	}
	k := refKey{target, senderID, typ}
	if e := s.ids[k]; e != nil {
		return e
	}
	if len(s.list) >= maxRefs {
		return nil
	}
	e := &envelopeRef{target: target, senderID: senderID, typ: typ, ref: uint64(len(s.list) + 1)}
	if s.ids == nil {
		s.ids = make(map[refKey]*envelopeRef)
	}
	s.ids[k] = e
	s.mu.Lock()
	s.list = append(s.list, e)
	s.mu.Unlock()
	p.queueControl(refDefine, definePayload(nil, e))
	return e
}

// of returns the names of reference ref, or nil.
func (s *sendRefs) of(ref uint64) *envelopeRef {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ref == 0 || ref > uint64(len(s.list)) {
		return nil
	}
	return s.list[ref-1]
}

// defineAll returns a chunk of the definitions of every reference, or nil
// when there are none: what a new connection must be told before the
// frames of the outbox it carries.
func (s *sendRefs) defineAll() []byte {
	if len(s.list) == 0 {
		return nil
	}
	var payload []byte
	n := 0
	for _, e := range s.list {
		n += frameHeaderLen + envelopeSize(creditTarget, "", "", refDefine, definePayloadSize(e))
	}
	dst := getChunk(n, false)
	for _, e := range s.list {
		payload = definePayload(payload[:0], e)
		dst = appendControl(dst, refDefine, payload)
	}
	return dst
}

// definePayload appends the payload of e's definition to dst.
func definePayload(dst []byte, e *envelopeRef) []byte {
	dst = protowire.AppendVarint(dst, e.ref)
	dst = protowire.AppendString(dst, e.target)
	dst = protowire.AppendString(dst, e.senderID)
	return protowire.AppendString(dst, e.typ)
}

// definePayloadSize is the size of definePayload's bytes for e.
func definePayloadSize(e *envelopeRef) int {
	return protowire.SizeVarint(e.ref) + protowire.SizeBytes(len(e.target)) +
		protowire.SizeBytes(len(e.senderID)) + protowire.SizeBytes(len(e.typ))
}

// refEnvelopeSize is the size of an envelope that names its reference.
func refEnvelopeSize(ref uint64, psize int) int {
	return 1 + protowire.SizeVarint(ref) + 1 + protowire.SizeBytes(psize)
}

// recvRef is a reference the peer defined on a connection.
type recvRef struct {
	target, senderID, typ []byte
}

// defineRef takes the peer's definition of a reference (a control frame's
// payload).
func (c *conn) defineRef(payload []byte) error {
	ref, n := protowire.ConsumeVarint(payload)
	if n < 0 || ref == 0 || ref > maxRefs {
		return fmt.Errorf("%w: malformed reference definition", ErrProtocol)
	}
	b := payload[n:]
	var names [3][]byte
	for i := range names {
		v, m := protowire.ConsumeBytes(b)
		if m < 0 {
			return fmt.Errorf("%w: malformed reference definition", ErrProtocol)
		}
		names[i], b = v, b[m:]
	}
	target, senderID, typ := names[0], names[1], names[2]
	switch {
	case len(b) > 0, len(target) == 0, len(typ) == 0:
		return fmt.Errorf("%w: malformed reference definition", ErrProtocol)
	case len(target)+len(senderID)+len(typ) > maxRefBytes:
		return fmt.Errorf("%w: reference definition over %d bytes", ErrProtocol, maxRefBytes)
	case isFutureID(target), isFutureID(senderID), isCreditFrame(target):
		return fmt.Errorf("%w: reference to a future or the control target", ErrProtocol)
	}
	if int(ref) > len(c.refs) {
		// Grown as the peer numbers its references, from 1 up.
		c.refs = append(c.refs, make([]recvRef, int(ref)-len(c.refs))...)
	}
	// Copied out of the read buffer, which the next read reuses: at most
	// maxRefs times maxRefBytes per connection.
	buf := make([]byte, 0, len(target)+len(senderID)+len(typ))
	buf = append(append(append(buf, target...), senderID...), typ...)
	r := &c.refs[ref-1]
	r.target = buf[:len(target):len(target)]
	r.senderID = buf[len(target) : len(target)+len(senderID) : len(target)+len(senderID)]
	r.typ = buf[len(target)+len(senderID):]
	return nil
}

// resolve gives e, a frame that names a reference, the names the peer
// defined for it.
func (c *conn) resolve(e *envelope) error {
	if e.ref > uint64(len(c.refs)) || c.refs[e.ref-1].target == nil {
		return fmt.Errorf("%w: undefined reference %d", ErrProtocol, e.ref)
	}
	r := &c.refs[e.ref-1]
	e.target, e.senderID, e.typ = r.target, r.senderID, r.typ
	return nil
}

// resolveOwn gives e, a frame this side encoded for p, the names of its
// reference; it reports false when the frame has a reference p does not
// know (which cannot happen).
func (p *peer) resolveOwn(e *envelope) bool {
	if e.ref == 0 {
		return true
	}
	r := p.refs.of(e.ref)
	if r == nil {
		return false
	}
	e.target, e.senderID, e.typ = []byte(r.target), []byte(r.senderID), []byte(r.typ)
	return true
}

// prependDefinitions puts the definitions of all of p's references at the
// front of its outbox (p.mu held), for a new connection.
func (p *peer) prependDefinitions() {
	if chunk := p.refs.defineAll(); chunk != nil {
		p.out.prepend(chunk, len(p.refs.list))
	}
}
