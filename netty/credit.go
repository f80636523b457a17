// Endpoint credit: how much a sender may have in flight to one endpoint of
// its peer, so that a flood to one endpoint never stops the connection.

package netty

import (
	"encoding/binary"
	"fmt"

	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/encoding/protowire"
)

// The connection-wide inbound bound (flow.go) stops reading a connection
// once its endpoints lag behind it: everything behind in the socket, an
// ask or a reply to an idle endpoint too, then waits for the flooded one.
// Endpoint credit keeps a sender from getting there. Each side grants its
// peer, per endpoint (per target name), a credit of endpointShare-th of the
// connection's bound, in messages and in frame bytes; the sender keeps what
// it sends to an endpoint whose credit is used in a queue of that endpoint
// in its own outbox (bounded with the rest of it by
// spark.rpc.io.maxQueuedBytesPerConnection), and the receiver gives the
// credit back as the endpoint processes the messages. So a flooded endpoint
// holds its flood at the sender, the connection stays readable, and what
// goes to other endpoints passes. Per-sender order holds per endpoint: a
// message for an endpoint with a queue joins the queue.
//
// The protocol, in frames that are WireEnvelopes to the reserved target
// creditTarget (never an endpoint: a name with '$' cannot be registered):
//
//   - offer (type creditOffer): the credit per endpoint a side grants,
//     two varints (messages, bytes), each at least 1. The dialer's first
//     frame after the handshake is its offer; the acceptor sends its own
//     when it reads the dialer's (so a peer that never offers never gets a
//     control frame);
//   - accept (type creditAccept, no payload), a side's answer to the
//     peer's offer: every frame after it respects that credit;
//   - grant (type creditGrant): two varints (messages, bytes) and the
//     target's name, the messages (and their frame bytes) of that target
//     that the sender of the grant has processed since its last grant.
//
// A sender counts what it sent to each target on the connection, from its
// first frame, less what was granted back; before the peer's offer it
// queues nothing. Once it has sent its accept, it sends a message to a
// target only while that count is under the credit in messages and in
// bytes (so one message larger than the byte credit goes when nothing is
// in flight). The receiver counts each target's messages read and not yet
// processed; once it has read the peer's accept, a frame that arrives when
// that count is at the credit breaks the protocol and closes the
// connection with ErrProtocol: a peer that ignores credit is cut off, and
// until then the connection-wide bound holds it.
const (
	creditTarget = "credit$"
	creditOffer  = "sparkrpc.credit.Offer"
	creditAccept = "sparkrpc.credit.Accept"
	creditGrant  = "sparkrpc.credit.Grant"
)

// endpointShare is the share of the connection's inbound bound that one
// endpoint is granted: that many endpoints flooded at once fill it.
const endpointShare = 4

// grantFraction is the fraction of its credit after which a target's read
// messages are marked, so that their credit comes back once processed.
const grantFraction = 4

// A frame's charge against the byte credit is what it holds up behind it,
// not its bytes alone. A flood's frames lie ahead of an ask to another
// endpoint in the sockets and the reader, and small frames keep a reader
// busy for longer than their bytes say (each is a frame to decode and a
// message to hand on): at 1 KiB a frame, the whole byte credit's worth of
// them kept an ask waiting some 2 ms. Large frames are what the byte credit
// is for, and a deep pipeline of them is what keeps a borrowing endpoint's
// stream at the socket's rate. So a frame is charged chargeWeight times its
// bytes, but never more than maxCharge nor less than its bytes: a flood of
// 1 KiB frames holds a twenty-fourth of the byte credit in flight, one of
// 64 KiB frames the whole of it (docs/performance.md has the weights
// measured). Both sides charge alike (the sender counts its frames, the
// receiver enforces and grants), so the charge depends on the frame's size
// alone.
const (
	chargeWeight = 24
	maxCharge    = 64 << 10
)

// frameCharge returns the byte credit a frame of size bytes takes.
func frameCharge(size int) int64 {
	return int64(max(size, min(size*chargeWeight, maxCharge)))
}

// endpointCredit returns the credit this side grants per endpoint.
func (t *Transport) endpointCredit() (n, b int64) {
	return max(1, t.maxInFlight/endpointShare), max(1, t.maxInFlightB/endpointShare)
}

// appendControl appends a control frame of type typ with payload to dst.
func appendControl(dst []byte, typ string, payload []byte) []byte {
	size := envelopeSize(creditTarget, "", "", typ, len(payload))
	dst = binary.BigEndian.AppendUint32(dst, uint32(size)) //nolint:gosec // a few bytes more than the payload
	dst = appendString(dst, fieldTarget, creditTarget)
	dst = appendString(dst, fieldType, typ)
	dst = protowire.AppendTag(dst, fieldPayload, protowire.BytesType)
	return protowire.AppendBytes(dst, payload)
}

// queueControl appends a control frame to p's outbox, ahead of nothing the
// peer waits for in order (it goes behind what is queued). Control frames
// are not bounded by the queue's bound: a grant is what lets the peer's
// backlog move. It reports whether the outbox was empty. Called with p.mu
// held.
func (p *peer) queueControl(typ string, payload []byte) bool {
	wasEmpty := p.out.empty()
	size := frameHeaderLen + envelopeSize(creditTarget, "", "", typ, len(payload))
	dst := p.out.tail(size)
	p.out.setTail(appendControl(dst, typ, payload))
	p.out.frames++
	p.out.ctl += int32(size) //nolint:gosec // a control frame's few bytes
	return wasEmpty
}

// maxControlQueued bounds the control frames waiting in an outbox
// (outbuf.ctl). They are
// outside spark.rpc.io.maxQueuedBytesPerConnection, since a grant is what
// lets the peer's backlog move, and a peer that reads its grants has at
// most a few per endpoint waiting (its credit's quarters): only a peer that
// reads nothing while it sends, say, frames to endpoints that do not exist
// (each granted back at once) reaches this, and its connection is closed.
const maxControlQueued = 1 << 20

// isCreditFrame reports whether a frame's target is the reserved one.
func isCreditFrame(target []byte) bool {
	return len(target) == len(creditTarget) && string(target) == creditTarget
}

// handleCredit handles a control frame read from c.
func (c *conn) handleCredit(e envelope) error {
	switch string(e.typ) {
	case creditOffer:
		n, b, _, err := parseCreditValues(e.payload)
		if err != nil || n < 1 || b < 1 {
			return fmt.Errorf("%w: malformed credit offer", ErrProtocol)
		}
		if c.offered {
			// Each is answered with control frames, which the outbox's
			// bound does not count: a peer that repeats its offer and
			// reads nothing would grow the outbox without end.
			return fmt.Errorf("%w: a second credit offer", ErrProtocol)
		}
		c.offered = true
		c.flush()
		c.peerOffered(n, b)
		return nil
	case creditAccept:
		c.enforce = true
		return nil
	case creditGrant:
		n, b, id, err := parseCreditValues(e.payload)
		if err != nil {
			return fmt.Errorf("%w: malformed credit grant", ErrProtocol)
		}
		return c.granted(string(id), n, b)
	case refDefine:
		return c.defineRef(e.payload)
	}
	return fmt.Errorf("%w: unknown control frame %q", ErrProtocol, e.typ)
}

// parseCreditValues reads two varints and returns them with what follows.
func parseCreditValues(b []byte) (n, size int64, rest []byte, err error) {
	v1, k := protowire.ConsumeVarint(b)
	if k < 0 {
		return 0, 0, nil, protowire.ParseError(k)
	}
	v2, k2 := protowire.ConsumeVarint(b[k:])
	if k2 < 0 {
		return 0, 0, nil, protowire.ParseError(k2)
	}
	if v1 > 1<<62 || v2 > 1<<62 {
		return 0, 0, nil, fmt.Errorf("value out of range")
	}
	return int64(v1), int64(v2), b[k+k2:], nil //nolint:gosec // checked above
}

// creditPayload encodes the payload of an offer or a grant.
func creditPayload(dst []byte, n, b int64, id string) []byte {
	dst = protowire.AppendVarint(dst, uint64(n)) //nolint:gosec // not negative
	dst = protowire.AppendVarint(dst, uint64(b)) //nolint:gosec // not negative
	return append(dst, id...)
}

// offerCredit queues this side's offer as the first frame of c, a dialled
// connection being attached to p (p.mu held): it goes ahead of what p's
// outbox holds.
func (c *conn) offerCredit(p *peer) {
	p.out.prepend(appendControl(getChunk(64, true), creditOffer, c.offerPayload()), 1)
}

// offerPayload is the payload of this side's offer.
func (c *conn) offerPayload() []byte {
	n, b := c.t.endpointCredit()
	return creditPayload(make([]byte, 0, 2*binary.MaxVarintLen64), n, b, "")
}

// peerOffered takes the peer's offer: from the accept on, Send keeps each
// target's messages within it.
func (c *conn) peerOffered(n, b int64) {
	p := c.p
	p.mu.Lock()
	if p.conn != c {
		p.mu.Unlock()
		return
	}
	p.credit.limN, p.credit.limB = n, b
	wasEmpty := p.queueControl(creditAccept, nil)
	if !c.outbound {
		p.queueControl(creditOffer, c.offerPayload())
	}
	p.mu.Unlock()
	c.grants.Store(true)
	if wasEmpty {
		c.signal()
	}
}

// granted gives back the credit of n messages and b bytes to target id and
// sends what its queue may now send.
func (c *conn) granted(id string, n, b int64) error {
	p := c.p
	p.mu.Lock()
	if p.conn != c {
		p.mu.Unlock()
		return nil // a grant for a connection that was replaced
	}
	ec := p.credit.to[id]
	if ec == nil || ec.n < n || ec.b < b {
		p.mu.Unlock()
		return fmt.Errorf("%w: peer granted credit for messages that were not sent", ErrProtocol)
	}
	ec.n -= n
	ec.b -= b
	wasEmpty := p.out.empty()
	p.release(ec)
	if ec.n == 0 && ec.b == 0 && ec.held.empty() {
		p.credit.forget(id)
	}
	moved := wasEmpty && !p.out.empty()
	p.mu.Unlock()
	if moved {
		c.signal()
	}
	return nil
}

// grant sends the peer the credit of n processed messages (b bytes) of
// target id, if c is still its peer's connection. It runs on the loop of
// the endpoint that processed them.
func (c *conn) grant(id string, n, b int64) {
	p := c.p
	var buf [2*binary.MaxVarintLen64 + senderIDRoom]byte
	payload := creditPayload(buf[:0], n, b, id)
	p.mu.Lock()
	if p.conn != c {
		p.mu.Unlock()
		return
	}
	if queued := p.out.ctl; queued > maxControlQueued {
		p.mu.Unlock()
		c.close(fmt.Errorf("%w: the peer reads nothing back: %d bytes of grants wait for it", ErrProtocol, queued))
		return
	}
	wasEmpty := p.queueControl(creditGrant, payload)
	p.mu.Unlock()
	if wasEmpty {
		c.signal()
	}
}

// sendCredit is a peer's outbound side of endpoint credit (under p.mu).
type sendCredit struct {
	limN, limB int64 // the peer's credit per target; 0 until its offer was read
	to         map[string]*targetCredit
	heldB      int64 // bytes of frames held, in all queues
	last       *targetCredit
	lastID     string
}

// targetCredit is what a peer's connection has in flight to one target, and
// the frames waiting for its credit.
type targetCredit struct {
	n, b int64  // messages (their charge, frameCharge) sent and not granted back
	held outbuf // frames waiting for credit, in order
	skip int    // bytes of held.chunks[0] already released
	// heldIn counts what each chunk of held holds and has not released.
	heldIn []heldChunk
	// ref is the reference of the names of the last frame to this target
	// (refs.go), nil for none.
	ref *envelopeRef

	// Send writes n and b for every message. Padded from 104 to 128
	// bytes, a size class of whole cache lines, they share no line with
	// objects that the connection's reader on the other processor writes
	// for every frame it reads (TestTargetCreditOwnsItsCacheLines).
	_ [24]byte
}

// heldChunk is what a chunk of a credit queue holds: its frames and their
// charge (frameCharge of their bodies, the length prefixes not counted).
type heldChunk struct {
	frames int
	charge int64
}

// errControlTarget is Send's error for a message to creditTarget: the peer
// would take it for a control frame, and close the connection as one that
// breaks the protocol. No endpoint has that name (actor.ValidateName).
var errControlTarget = fmt.Errorf("%w: %q is the transport's control target, not an endpoint", actor.ErrInvalidName, creditTarget)

// errEmptyTarget is Send's error for a message to the empty name: the peer
// would close the connection on its envelope without target, failing what
// else waits on the connection. No endpoint has that name.
var errEmptyTarget = fmt.Errorf("%w: the empty name is not an endpoint's", actor.ErrInvalidName)

// of returns the credit of target id, made if there is none; nil for
// creditTarget and the empty name, which are checked here, where a target
// is new to the connection, rather than for every message.
func (s *sendCredit) of(id string) *targetCredit {
	if s.last != nil && s.lastID == id {
		return s.last
	}
	ec := s.to[id]
	if ec == nil {
		if id == creditTarget || id == "" {
			return nil
		}
		if s.to == nil {
			s.to = make(map[string]*targetCredit)
		}
		ec = &targetCredit{held: outbuf{small: true}}
		s.to[id] = ec
	}
	s.last, s.lastID = ec, id
	return ec
}

// unsent takes back the count of a frame of size bytes to target id that
// could not be encoded after all.
func (s *sendCredit) unsent(id string, size int) {
	ec := s.of(id)
	ec.n--
	ec.b -= frameCharge(size)
}

// forget drops the credit of target id, which has nothing in flight.
func (s *sendCredit) forget(id string) {
	delete(s.to, id)
	if s.lastID == id {
		s.last, s.lastID = nil, ""
	}
}

// full reports whether ec may send nothing more now.
func (s *sendCredit) full(ec *targetCredit) bool {
	return s.limN > 0 && (ec.n >= s.limN || ec.b >= s.limB)
}

// release moves frames of ec's queue to the outbox while its credit lasts.
// A chunk whose frames all fit in the credit moves whole, without a copy:
// a queue's chunks are small (4 KiB), and a grant is a quarter of the
// credit, so only the frames of the chunk a grant ends in are copied, one
// by one. Called with p.mu held.
func (p *peer) release(ec *targetCredit) {
	s := &p.credit
	for !ec.held.empty() && !s.full(ec) {
		c, in := ec.held.chunks[0], &ec.heldIn[0]
		if ec.skip == 0 && (s.limN == 0 || ec.n+int64(in.frames) <= s.limN && ec.b+in.charge <= s.limB) {
			p.out.chunks = append(p.out.chunks, c)
			p.out.size += len(c)
			p.out.frames += in.frames
			ec.n += int64(in.frames)
			ec.b += in.charge
			s.heldB -= int64(len(c))
			ec.held.size -= len(c)
			ec.held.frames -= in.frames
			ec.popHeld()
			continue
		}
		body := int(binary.BigEndian.Uint32(c[ec.skip:]))
		n := frameHeaderLen + body
		dst := p.out.tail(n)
		p.out.setTail(append(dst, c[ec.skip:ec.skip+n]...))
		p.out.frames++
		ec.n++
		charge := frameCharge(body)
		ec.b += charge
		in.frames--
		in.charge -= charge
		s.heldB -= int64(n)
		ec.skip += n
		ec.held.size -= n
		ec.held.frames--
		if ec.skip == len(c) {
			recycleChunk(c)
			ec.popHeld()
		}
	}
	if ec.held.empty() {
		ec.held.chunks, ec.heldIn = nil, nil
	}
}

// popHeld drops the first chunk of ec's queue, released.
func (ec *targetCredit) popHeld() {
	ec.held.chunks[0] = nil
	ec.held.chunks = ec.held.chunks[1:]
	ec.heldIn = ec.heldIn[1:]
	ec.skip = 0
}

// restart makes p's credit that of a new connection (p.mu held): the peer's
// offer is not known yet, so every queue is released, and what is in flight
// is what the outbox holds, which the new connection will carry, after the
// definitions of the references its frames may name (refs.go).
func (p *peer) restart() {
	s := &p.credit
	s.limN, s.limB = 0, 0
	for _, ec := range s.to {
		ec.n, ec.b = 0, 0
		p.release(ec)
	}
	clear(s.to)
	s.last, s.lastID = nil, ""
	p.dropControlFrames()
	forEachFrame(p.out.chunks, 0, func(body []byte) {
		e, err := parseEnvelope(body)
		if err != nil || !p.resolveOwn(&e) || isCreditFrame(e.target) || e.isReply() {
			return
		}
		ec := s.of(string(e.target))
		ec.n++
		ec.b += frameCharge(len(body))
	})
	p.prependDefinitions()
}

// take removes and returns every target's credit and queue (p.mu held).
func (s *sendCredit) take() map[string]*targetCredit {
	to := s.to
	s.to, s.last, s.lastID, s.heldB = nil, nil, "", 0
	return to
}

// dropHeld reports the frames of held, taken from the peer of c when c
// closed, as lost with c.
func (c *conn) dropHeld(held map[string]*targetCredit, cause error) {
	for _, ec := range held {
		if !ec.held.empty() {
			c.dropFrames(ec.held.chunks, int64(ec.skip), cause)
			recycle(ec.held.chunks)
		}
	}
}

// dropControlFrames removes the control frames from p's outbox (p.mu held)
// when a new connection takes it over: a grant, accept, offer or
// definition queued for the old connection answers what was read on that
// one, and on the new one it would give back credit for frames the peer
// never sent on it, or hold the peer to an offer it has not made there.
// restart's caller queues the new connection's offer and definitions.
func (p *peer) dropControlFrames() {
	var keep outbuf
	forEachFrame(p.out.chunks, 0, func(body []byte) {
		if e, err := parseEnvelope(body); err == nil && e.ref == 0 && isCreditFrame(e.target) {
			return
		}
		dst := keep.tail(frameHeaderLen + len(body))
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(body))) //nolint:gosec // a frame's length
		keep.setTail(append(dst, body...))
		keep.frames++
	})
	p.out.reset()
	p.out = keep
}
