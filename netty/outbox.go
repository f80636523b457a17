// A peer's outbox, and Send.

package netty

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/lockhook"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// peer is the outbox of one peer identity: the frames waiting for its
// connection, in the order they were sent.
type peer struct {
	identity string
	client   bool // a client-mode peer: never dialled

	mu       lockhook.Mutex // WithLockRelease's hook runs at each release
	conn     *conn
	dialing  bool
	ready    chan struct{} // closed when a connection is attached
	out      outbuf        // encoded frames not yet taken by the writer
	writing  int           // bytes taken by a writer and not yet written
	unsent   []queued      // what buf holds while there is no connection
	credit   sendCredit    // what its connection has in flight per target
	refs     sendRefs      // the envelopes its sender defined (refs.go)
	sockAddr actor.RpcAddress
	removed  bool          // dropped from Transport.peers: its connection closed
	drained  chan struct{} // closed once out is empty, or the connection closed (Shutdown's flush)

	// Crossed dials: awaiting says the dial lost to the peer's and waits
	// for its connection (which must then be accepted); refusedPeer, that
	// an inbound connection from the peer was refused because this side's
	// dial was to win (so the peer waits for this side's: dial again).
	awaiting    bool
	refusedPeer bool

	// Reconnect backoff (listening peers): after a failed connect, Send
	// fails with connErr until retryAt.
	failures int
	connErr  *ConnectError
	retryAt  time.Time
	forget   *time.Timer // drops the peer from the map once it is idle past its window

	sentBytes atomic.Uint64 // written to its connections
	recvBytes atomic.Uint64 // read from its established connections
}

type queued struct {
	target, sender *protoactor.PID
	msg            proto.Message
}

// Send implements actor.Transport: it marshals msg into the peer's outbox
// and returns; a writer goroutine per connection sends what accumulated in
// one write. A lone ask or reply on a quiet connection Send writes itself,
// without waiting for the socket (writeInline). A message over
// spark.rpc.message.maxSize or one that cannot be marshalled fails here; a
// reply (to a future) that fails so is replaced by an RpcFailure, so that
// the asker fails at once.
func (t *Transport) Send(target, sender *protoactor.PID, msg proto.Message) error {
	// Every message takes this path: what a message to a peer with a
	// connection needs stays in this function, and only the cases without
	// a connection and the inline write (a system call anyway) are calls.
	if t.closing.Load() {
		return ErrTransportClosed
	}
	reply := isReply(target, sender)
	p, err := t.sendPeer(target.Address, reply)
	if err != nil {
		return err
	}
	// The sender's address is not written (see the WireEnvelope's
	// sender_address): the receiver takes the connection's peer as the
	// sender.
	var sID string
	if sender != nil {
		sID = sender.Id
	}
	h, err := sizeEnvelope(target.Id, "", sID, msg, t.maxSize)
	if err != nil {
		t.dropIfUnused(p)
		return t.sendFailed(target, sender, msg, h.size, err)
	}
	p.mu.Lock()
	if p.removed {
		// Its connection closed and the peer left the map meanwhile.
		p.mu.Unlock()
		t.lastPeer.CompareAndSwap(p, nil)
		if p, err = t.lockPeerForSend(target.Address, reply); err != nil {
			return err
		}
	}
	c := p.conn
	if c == nil {
		if err := t.cannotConnect(p, target, reply); err != nil {
			p.mu.Unlock()
			return err
		}
	}
	wasEmpty := p.out.empty()
	if done, err := t.refuseOrHold(p, target, sender, msg, &h, reply, wasEmpty); done {
		return err
	}
	dst := p.out.tail(frameHeaderLen + h.size)
	dst, err = writeEnvelope(dst, &h, msg)
	p.out.setTail(dst)
	if err != nil {
		return t.unlockAfterEncodeFailure(p, c, target, sender, msg, &h, wasEmpty, err)
	}
	p.out.frames++
	if c == nil {
		p.unsent = append(p.unsent, queued{target, sender, msg})
		if !p.dialing {
			t.startDial(p)
		}
		p.mu.Unlock()
		return nil
	}
	// An inline write writes one chunk: the frame, and the definition of
	// its names when refFor queued one, must have gone into one.
	if wasEmpty && len(p.out.chunks) == 1 && !c.busy && !c.shut && c.established && c.raw != nil && c.lastFrames <= 1 && awaited(target, sender) {
		if now := t.now(); now.Sub(c.lastWrite) >= t.inlineQuiet {
			// A quiet connection: write this frame now rather than wake
			// the writer, if the socket takes it without waiting.
			c.unlockAndWriteInline(now)
			return nil
		}
	}
	p.mu.Unlock()
	if wasEmpty {
		c.signal()
	}
	return nil
}

// unlockAfterEncodeFailure is Send's way out when msg could not be
// encoded into p's outbox (p.mu held, released here): the empty chunk and
// the frame's credit are taken back, and the writer is woken for a
// definition of the message's names that refFor queued ahead of it in an
// outbox that was empty (wasEmpty), so that it, and what follows it, goes.
func (t *Transport) unlockAfterEncodeFailure(p *peer, c *conn, target, sender *protoactor.PID, msg proto.Message, h *envelopeHeader, wasEmpty bool, err error) error {
	p.out.dropEmptyTail()
	if !isReply(target, sender) {
		p.credit.unsent(target.Id, h.size)
	}
	p.unlockAndWake(c, wasEmpty)
	if c == nil {
		t.dropIfUnused(p)
	}
	return t.sendFailed(target, sender, msg, h.size, err)
}

// dropIfUnused drops p from the map when a Send that found or made it
// failed before anything was queued or dialled: a peer that was never
// connected to and that nothing waits on is not kept (nor listed by
// PeerStats) for a message that never left. A peer with a failed connect
// stays for its backoff window (connectFailed).
func (t *Transport) dropIfUnused(p *peer) {
	p.mu.Lock()
	unused := p.conn == nil && !p.dialing && len(p.unsent) == 0 && p.out.empty() && p.connErr == nil && !p.removed
	if unused {
		p.removed = true
	}
	p.mu.Unlock()
	if unused {
		t.peers.CompareAndDelete(p.identity, p)
		t.lastPeer.CompareAndSwap(p, nil)
	}
}

// unlockAndWake releases p.mu, and wakes c's writer when p's outbox, empty
// before this Send (wasEmpty), holds frames that the Send will not signal
// for: the definition of the message's names that refFor queued ahead of a
// message that was held for credit or could not be encoded.
func (p *peer) unlockAndWake(c *conn, wasEmpty bool) {
	wake := wasEmpty && !p.out.empty() && c != nil
	p.mu.Unlock()
	if wake {
		c.signal()
	}
}

// refuseOrHold is Send's check of p's bounds, called with p.mu held: a
// message that would queue more than spark.rpc.io.maxQueuedBytesPerConnection for a
// peer that does not keep up is refused, and a message over its target's
// credit (credit.go) is queued for it. It reports whether it did either
// (p.mu then released), with the error Send returns. wasEmpty says p's
// outbox was empty when Send took the lock (unlockAndWake).
func (t *Transport) refuseOrHold(p *peer, target, sender *protoactor.PID, msg proto.Message, h *envelopeHeader, reply, wasEmpty bool) (bool, error) {
	if q := int64(p.out.size+p.writing) + p.credit.heldB; q > 0 && q+int64(frameHeaderLen+h.size) > t.maxQueued {
		// Refuse rather than grow without bound (a message is always
		// taken when nothing is queued).
		p.mu.Unlock()
		return true, &QueueFullError{Peer: p.identity, Queued: q, Size: int64(frameHeaderLen + h.size), Limit: t.maxQueued}
	}
	if reply {
		return false, nil
	}
	held, err := p.holdOverCredit(target.Id, h, msg)
	if !held {
		return false, nil
	}
	c := p.conn
	p.unlockAndWake(c, wasEmpty)
	if err != nil && c == nil {
		t.dropIfUnused(p)
	}
	switch {
	case err == errControlTarget || err == errEmptyTarget:
		return true, err
	case err != nil:
		return true, t.sendFailed(target, sender, msg, h.size, err)
	}
	return true, nil
}

// holdOverCredit queues the frame of msg for target id when the target's
// credit is used or frames wait for it already, and reports whether it
// did (or failed to, with err); else it counts the frame as sent. Called
// with p.mu held.
func (p *peer) holdOverCredit(id string, h *envelopeHeader, msg proto.Message) (bool, error) {
	ec := p.credit.of(id)
	if ec == nil {
		if id == "" {
			return true, errEmptyTarget
		}
		return true, errControlTarget
	}
	if p.credit.limN > 0 {
		p.refFor(ec, id, h)
	}
	if !ec.held.empty() || p.credit.full(ec) {
		return true, p.hold(ec, h, msg)
	}
	ec.n++
	ec.b += frameCharge(h.size)
	return false, nil
}

// hold queues the frame of msg for ec's credit (p.mu held).
func (p *peer) hold(ec *targetCredit, h *envelopeHeader, msg proto.Message) error {
	k := len(ec.held.chunks)
	dst := ec.held.tail(frameHeaderLen + h.size)
	dst, err := writeEnvelope(dst, h, msg)
	ec.held.setTail(dst)
	if err != nil {
		ec.held.dropEmptyTail()
		return err
	}
	if len(ec.held.chunks) > k {
		ec.heldIn = append(ec.heldIn, heldChunk{})
	}
	in := &ec.heldIn[len(ec.heldIn)-1]
	in.frames++
	in.charge += frameCharge(h.size)
	ec.held.frames++
	p.credit.heldB += int64(frameHeaderLen + h.size)
	return nil
}

// lockPeerForSend returns, locked, the outbox of identity that is in the
// map (peerForSend), trying again while the one it finds has left it.
func (t *Transport) lockPeerForSend(identity string, reply bool) (*peer, error) {
	for {
		p, err := t.peerForSend(identity, reply)
		if err != nil {
			return nil, err
		}
		p.mu.Lock()
		if !p.removed {
			return p, nil
		}
		p.mu.Unlock()
	}
}

// cannotConnect returns, for a peer without a connection, why Send may not
// queue a message for it and dial: a reply is never dialled, a client-mode
// peer is never dialled, and a listening peer is not redialled within the
// backoff after a failed connect. It is called with p.mu held.
func (t *Transport) cannotConnect(p *peer, target *protoactor.PID, reply bool) error {
	switch {
	case reply:
		return t.unroutedReply(target)
	case p.client:
		return fmt.Errorf("netty: no connection to client-mode peer %s: %w", p.identity, actor.ErrConnectionClosed)
	case !p.dialing && p.connErr != nil && time.Now().Before(p.retryAt):
		// The last connect failed moments ago: do not redial yet.
		return p.connErr
	}
	return nil
}

// unlockAndWriteInline takes the frame that Send has just queued for c, a
// quiet connection, releases the lock of c's peer (which the caller holds)
// and writes the frame itself (writeInline).
func (c *conn) unlockAndWriteInline(now time.Time) {
	p := c.p
	c.busy = true
	c.lastFrames = 1
	size := p.out.size
	batch := p.out.take(c.inlineSpare)
	p.writing += size
	p.mu.Unlock()
	c.inlineSpare = nil
	c.writeInline(batch, size, now)
}

// peerForSend returns the outbox of the peer identity. A reply (or failure
// notice) only goes over the connection of the message it answers: when the
// peer has no outbox (so no connection), it is not made one, and the reply
// is dropped and counted (unroutedReply), never dialled.
func (t *Transport) peerForSend(identity string, reply bool) (*peer, error) {
	if !reply {
		return t.peerFor(identity)
	}
	if v, ok := t.peers.Load(identity); ok {
		return v.(*peer), nil
	}
	return nil, t.unroutedReply(&protoactor.PID{Address: identity})
}

// sendPeer returns the peer Send sends to at identity: the one it found
// last (lastPeer), when it is that identity's, else peerForSend's, which
// it keeps.
func (t *Transport) sendPeer(identity string, reply bool) (*peer, error) {
	if p := t.lastPeer.Load(); p != nil && p.identity == identity {
		return p, nil
	}
	p, err := t.peerForSend(identity, reply)
	if err == nil {
		t.lastPeer.Store(p)
	}
	return p, err
}

// ErrReplyUnrouted matches the error of a reply (or failure notice) that
// was not sent because the connection of the message it answers is gone.
// It wraps actor.ErrConnectionClosed.
var ErrReplyUnrouted = fmt.Errorf("netty: the connection a reply answers is gone, and replies are never dialled: %w", actor.ErrConnectionClosed)

// unroutedReply counts a reply that has no connection to go over and
// returns ErrReplyUnrouted (the env counts it as dropped).
func (t *Transport) unroutedReply(target *protoactor.PID) error {
	t.unrouted.Add(1)
	return fmt.Errorf("%w (to %s)", ErrReplyUnrouted, target.Address)
}

// isReply reports whether a frame from sender to target is a reply: it has
// no sender id (what the receiver sees: a sender without an id writes
// none) and goes to a future.
func isReply(target, sender *protoactor.PID) bool {
	return (sender == nil || sender.Id == "") && isFutureID(target.Id)
}

// isFutureID reports whether id, as a string or as the bytes of a frame,
// is the id of a reply future.
func isFutureID[T string | []byte](id T) bool {
	return len(id) >= len(futurePrefix) && string(id[:len(futurePrefix)]) == futurePrefix
}

// sendFailed turns a marshalling or size failure into the error Send
// returns; for a reply, the asker is failed with an RpcFailure instead.
func (t *Transport) sendFailed(target, sender *protoactor.PID, msg proto.Message, size int, err error) error {
	typ := "<nil>"
	if msg != nil {
		typ = string(msg.ProtoReflect().Descriptor().FullName())
	}
	var ferr error
	code := messages.ErrorCode_ERROR_CODE_ENCODE
	if err == errTooLarge {
		ferr = &actor.MessageTooLargeError{Size: size, Limit: t.maxSize}
		code = messages.ErrorCode_ERROR_CODE_TOO_LARGE
	} else {
		var ee *encodeError
		if errors.As(err, &ee) {
			err = ee.err
		}
		ferr = &EncodeError{Type: typ, Err: err}
	}
	if isReply(target, sender) {
		f, isFailure := msg.(*messages.RpcFailure)
		if !isFailure {
			t.log.Warn().Err(ferr).Str("to", target.String()).Msg("reply cannot be sent; failing the asker")
			f := actor.FailureToProto(ferr)
			f.Code = code
			return t.Send(target, nil, f)
		}
		// A failure that cannot be sent as it is (text not valid UTF-8, or
		// too large): send it made valid and cut to fit, so that the asker
		// still fails at once. FitFailure returns f itself when it cannot
		// help, which ends the recursion.
		budget := t.maxSize - envelopeSize(target.Id, "", "", typ, 0) - binaryVarintLen
		if fitted := actor.FitFailure(f, budget); fitted != f {
			t.log.Warn().Err(ferr).Str("to", target.String()).Msg("failure reply cannot be sent as it is; sending it sanitized")
			return t.Send(target, nil, fitted)
		}
	}
	return ferr
}

// binaryVarintLen is the longest varint, the most a length prefix can take.
const binaryVarintLen = 10

// dropFrames reports every frame of chunks after the first skip bytes to the
// host as undeliverable, as a failed connect reports what was queued: the
// connection closed before they were written. An ask fails at once; a
// one-way message is counted as dropped and logged (rate-limited by the
// host). The frames are decoded for that; the chunks are not kept.
func (c *conn) dropFrames(chunks [][]byte, skip int64, cause error) {
	t := c.t
	p := c.p
	addr := c.info.Address.String()
	if c.info.Address.IsZero() {
		addr = p.identity
	}
	err := &actor.ConnectionClosedError{Addr: addr, Cause: cause}
	if cause == nil {
		err.Cause = errors.New("closed before the message was sent")
	}
	n := 0
	forEachFrame(chunks, skip, func(body []byte) {
		e, perr := parseEnvelope(body)
		if perr != nil || !p.resolveOwn(&e) {
			return // cannot happen: this side encoded it
		}
		if isCreditFrame(e.target) {
			return // a control frame, which no one waits for
		}
		target := &protoactor.PID{Address: p.identity, Id: string(e.target)}
		var sender *protoactor.PID
		if len(e.senderID) > 0 {
			sender = &protoactor.PID{Address: t.info.Identity, Id: string(e.senderID)}
		}
		msg, derr := decodeMessage(e.typ, e.payload)
		if derr != nil {
			msg = &messages.WireEnvelope{Target: target.Id, Type: string(e.typ)}
		}
		n++
		t.host.Undeliverable(target, sender, msg, err)
	})
	if n > 0 && !t.closing.Load() {
		t.log.Warn().Err(cause).Str("peer", p.identity).Int("messages", n).Msg("connection closed; dropping queued messages")
	}
}

// decodeMessage unmarshals a payload of the message type typ, without a
// connection's type cache.
func decodeMessage(typ, payload []byte) (proto.Message, error) {
	mt, err := findMessageType(typ)
	if err != nil {
		return nil, err
	}
	return mt.decode(payload)
}
