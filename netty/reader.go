// The read loop of a connection: decoding frames and handing them to the env.

package netty

import (
	"bytes"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// readLoop delivers every frame until the connection fails. The reader of
// a connection that replaced another starts once the old reader has
// delivered what it had read and returned, so that a peer's messages keep
// their order across a reconnect.
func (c *conn) readLoop() {
	if !c.reading.CompareAndSwap(false, true) {
		return // closed before its reader started: close closed readDone
	}
	defer close(c.readDone)
	if prev := c.prev; prev != nil {
		c.prev = nil
		select {
		case <-prev.readDone:
		case <-c.done:
			return
		}
	}
	c.establishReader()
	// Once the connection is closed the reader only delivers what its
	// buffer still holds, without waiting for credit.
	flow := true
	for {
		if flow && c.overBound() && !c.awaitCredit() {
			flow = false
		}
		c.handOn()
		b, err := c.fr.next()
		if err == nil {
			err = c.handle(b)
		}
		if err != nil {
			c.flush()
			c.close(err)
			return
		}
	}
}

// handOnGroup is how many asks and replies the reader reads from its
// buffer before it hands them on and lets the goroutines they woke run.
//
// A connection that carries a window of asks (many in flight) otherwise
// moves the whole window as one batch through each side: one read holds
// every reply, the askers make all their next asks before the writer sends
// any, the other side reads them all and answers them all before its writer
// sends a reply. The two processors then take turns, and on a machine
// where waking an idle one is dear, each turn waits for that wake-up.
// Handed on in groups, the first asks of a window leave while the reader
// still holds the rest, and both sides work at once (docs/performance.md,
// "Before and after: asks handed on in groups"). One-way messages keep the
// batches of up to maxBatch: nobody waits for them, and a stream of them
// is fastest in large batches.
const handOnGroup = 8

// handOn runs before the reader takes its next frame. Before a read that
// goes to the socket, which may wait, it posts what was read and lets the
// goroutines the frames woke (an endpoint's loop, an asker) run first: they
// would otherwise wait for the read to find nothing and park, on the same
// processor. While the buffer still holds a whole frame, it does the same
// once handOnGroup asks and replies have been read since it last did. (A
// large frame, read a buffer at a time, does not count as held: yielding
// there made asks of 64 KiB slower. Nor does it yield before the prefix
// that follows a large frame read past the buffer, which it did not when
// that prefix was in the buffer: a yield there made a 64 KiB stream
// slower; docs/performance.md.)
func (c *conn) handOn() {
	if c.batchTo != nil && !c.fr.frameBuffered() {
		c.flush()
	}
	switch {
	case c.fr.past:
		return
	case !c.fr.buffered():
	case c.awaitedRead >= handOnGroup && c.fr.frameBuffered():
		c.flush()
	default:
		return
	}
	c.awaitedRead = 0
	runtime.Gosched()
}

// handle decodes one envelope and hands it to the host.
func (c *conn) handle(b []byte) error {
	e, err := parseEnvelope(b)
	if err != nil {
		return err
	}
	if e.ref != 0 {
		if err := c.resolve(&e); err != nil {
			return err
		}
	}
	if e.isReply() {
		// A reply: route it to its ask (replies.go) without building (or
		// caching) a PID for a target that is used once.
		c.flush()
		c.awaitedRead++
		c.handleReply(e)
		return nil
	}
	if isCreditFrame(e.target) {
		return c.handleCredit(e)
	}
	tg := c.lastTarget
	if tg == nil || string(e.target) != tg.pid.Id {
		tg = c.targetOf(e.target)
	}
	if c.overCredit(tg) {
		return fmt.Errorf("%w: peer exceeded the credit of endpoint %q", ErrProtocol, tg.pid.Id)
	}
	mem := len(b)
	if c.fr.chunk != nil {
		mem = cap(c.fr.chunk)
	}
	// Every frame for a target counts, answered or dropped too: its credit
	// comes back with the window's mark.
	defer c.delivered(tg, len(b), mem)
	target := tg.pid
	var sender *protoactor.PID
	if len(e.senderID) > 0 {
		// The sender is on the connection's peer, whatever the frame's
		// sender_address says: its reply goes back over this connection
		// (or nowhere), and no address a peer writes is ever dialled.
		sender = newSenderPID(c.info.Identity, e.senderID)
		c.awaitedRead++
	}
	mt, err := c.messageType(e.typ)
	if err != nil {
		c.flush()
		c.undecodable(target, sender, string(e.typ), err)
		return nil
	}
	if (tg.accepted != mt || tg.inbox == nil) && !c.admit(tg, sender, mt) {
		return nil // answered, or dropped, undecoded (admit.go)
	}
	if c.fr.chunk != nil {
		// A frame larger than the read buffer: the endpoint's loop
		// decodes it (deferred.go).
		chunk := c.fr.takeChunk()
		c.post(tg, actor.Inbound{Sender: sender, Deferred: newPendingDecode(c, mt, target, sender, chunk, e.payload), From: c.info.Identity})
		return nil
	}
	msg, err := mt.decodeOwned(e.payload, &c.slabs)
	if err != nil {
		c.flush()
		c.undecodable(target, sender, string(e.typ), err)
		return nil
	}
	c.post(tg, actor.Inbound{Sender: sender, Msg: msg, From: c.info.Identity})
	return nil
}

// targetOf returns the target whose id is id, kept for the connection.
func (c *conn) targetOf(id []byte) *target {
	tg := c.targets[string(id)]
	if tg == nil {
		if len(c.targets) >= max(cacheLimit, c.targetsCap) {
			c.dropIdleTargets()
		}
		tg = &target{pid: &protoactor.PID{Address: c.t.info.Identity, Id: string(id)}}
		c.targets[tg.pid.Id] = tg
	}
	c.lastTarget = tg
	return tg
}

// dropIdleTargets empties the connection's target cache of the targets
// that hold nothing: no message of theirs is in flight, in the open window
// or in the reader's batch. Those that do keep the counts their endpoint's
// credit is enforced with (credit.go): dropped, a peer that named enough
// other targets would find its credit whole again. The targets kept each
// hold a message in flight, so they are bounded by the connection's
// inbound bound; the cache may grow to twice what is kept before it is
// looked through again.
func (c *conn) dropIdleTargets() {
	for id, tg := range c.targets {
		if !tg.open && tg.wn == 0 && tg.inflight.Load() == 0 && tg != c.batchTo {
			delete(c.targets, id)
		}
	}
	c.lastTarget = nil
	c.targetsCap = 2 * len(c.targets)
}

// A target is a local endpoint that a connection delivers to: its PID, and
// its inbox while it runs.
type target struct {
	pid   *protoactor.PID
	inbox actor.Inbox // nil until found, or once it has stopped
	// accepted is the message type its inbox last accepted (admit).
	accepted *messageType
	// Its flow (flow.go): messages of closed windows not yet processed,
	// and their charge (frameCharge); the open window's messages, charge and
	// the bytes they hold; whether it is in the connection's open list.
	inflight, inflightB atomic.Int64
	wn, wc, wb          int64
	open                bool

	// The reader writes wn, wc and wb for every message. Padded from 80
	// to 128 bytes, a size class of whole cache lines, they share no line
	// with the messages of 80 bytes that other processors make and write
	// (TestTargetOwnsItsCacheLines).
	_ [48]byte
}

// senderIDRoom is the longest sender id kept in its PID's allocation: an
// ask's reply-to id ("future$." and up to 13 digits) and endpoint names fit.
const senderIDRoom = 32

// senderPID is a sender's PID with room for its id, so that the PID and
// its id string are one allocation: an ask's sender is a new future id
// every time, so the PIDs of senders are not cached as targets are.
type senderPID struct {
	pid protoactor.PID
	id  [senderIDRoom]byte
}

// newSenderPID returns the PID of the sender id at addr.
func newSenderPID(addr string, id []byte) *protoactor.PID {
	if len(id) > senderIDRoom {
		return &protoactor.PID{Address: addr, Id: string(id)}
	}
	s := &senderPID{}
	n := copy(s.id[:], id)
	s.pid.Address, s.pid.Id = addr, unsafe.String(&s.id[0], n)
	return &s.pid
}

// decodeOpts unmarshals into a new message: there is nothing to reset.
var decodeOpts = proto.UnmarshalOptions{Merge: true}

// errUnknownType marks a message type that is not in the protobuf registry.
type errUnknownType struct{ typ string }

func (e *errUnknownType) Error() string { return "unknown message type " + e.typ }

// messageType returns the message type whose full name is typ, kept for
// the connection.
func (c *conn) messageType(typ []byte) (*messageType, error) {
	if c.lastMT != nil && bytes.Equal(typ, c.lastType) {
		return c.lastMT, nil
	}
	mt := c.types[string(typ)]
	if mt == nil {
		var err error
		if mt, err = findMessageType(typ); err != nil {
			return nil, err
		}
		if len(c.types) >= cacheLimit {
			clear(c.types)
		}
		c.types[string(typ)] = mt
	}
	c.lastType, c.lastMT = append(c.lastType[:0], typ...), mt
	return mt, nil
}

// undecodable fails the remote asker of a request that cannot be decoded
// (a reply that cannot be decoded fails its ask in handleReply).
func (c *conn) undecodable(target, sender *protoactor.PID, typ string, err error) {
	t := c.t
	f := &messages.RpcFailure{
		Code:    messages.ErrorCode_ERROR_CODE_DECODE,
		Message: fmt.Sprintf("Cannot decode message of type %s for %s on %s: %v", typ, target.Id, t.info.Identity, err),
		Type:    "netty.DecodeError",
	}
	// A peer's every frame must not become a log line: rate-limited,
	// and counted in Stats.Undecodable.
	if n := t.undecodable.Add(1); t.undecodableLog.allow() {
		t.log.Warn().Str("type", typ).Str("to", target.Id).Str("peer", c.info.Identity).Err(err).Int64("undecodable", n).
			Msg("cannot decode message (logged at most every 10s)")
	}
	if sender != nil {
		if serr := t.Send(sender, nil, f); serr != nil {
			t.log.Warn().Err(serr).Msg("cannot report a decode failure")
		}
	}
}
