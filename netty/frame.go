// Frames and envelopes: the wire format, its encoder and its reader.

package netty

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// frameHeaderLen is the size of a frame's length prefix.
const frameHeaderLen = 4

// handshakeMaxFrame bounds every handshake frame.
const handshakeMaxFrame = 4 << 10

// handshakeBufferSize is the read buffer of a connection until its
// handshake has succeeded: handshake frames are small (a larger one is read
// in a buffer of its size, at most handshakeMaxFrame), and a socket that
// connects and sends nothing must cost little.
const handshakeBufferSize = 512

// initialBufferSize is the read buffer of an established connection until
// its traffic fills it (or a frame does not fit): most connections (an
// executor's config fetch, its registration, heartbeats) never need the
// full buffer, and a connection under load grows it once.
const initialBufferSize = 4 << 10

// largeFrame is the size above which a frame body is read in chunks, so that
// a peer that claims a large frame and sends nothing gets no big allocation.
const largeFrame = 1 << 20

// FrameTooLargeError is a frame from a peer whose length prefix exceeds the
// limit. The connection is closed without reading or allocating the frame.
type FrameTooLargeError struct {
	Size  uint32
	Limit int
	// Handshake is set for a frame of the handshake, whose limit is the
	// protocol's own, not spark.rpc.message.maxSize: a peer that sends a
	// larger one does not speak the protocol (it is not a sparkrpc env).
	Handshake bool
}

func (e *FrameTooLargeError) Error() string {
	if e.Handshake {
		return fmt.Sprintf("netty: handshake frame of %d bytes exceeds the protocol's bound (%d bytes): the peer does not speak the sparkrpc protocol", e.Size, e.Limit)
	}
	return fmt.Sprintf("netty: frame of %d bytes exceeds max allowed: spark.rpc.message.maxSize (%d bytes)", e.Size, e.Limit)
}

// Is reports whether target is ErrProtocol.
func (e *FrameTooLargeError) Is(target error) bool { return target == ErrProtocol }

// frameReader reads length-prefixed frames from a buffered reader. A frame
// returned by next is valid until the following call.
type frameReader struct {
	// r is held in the frameReader, not beside it: it is written for
	// every frame, and on its own it is 88 bytes, in the size class of 96
	// that objects another processor writes for every message share
	// (targetCredit, before it was padded).
	r       bufio.Reader
	src     io.Reader // what r reads from
	size    int       // r's size once established
	max     int
	buf     []byte
	discard int  // bytes of the previous frame still in r's buffer
	inFrame bool // a frame's header has been read and its body not yet
	grown   bool // r has its full size, or is not established yet
	// past is set when the last frame's body was read past r, leaving it
	// empty: the next header is then read on its own (headerPast).
	past bool
	hdr  [frameHeaderLen]byte // headerPast's prefix, here so that it does not escape
	// chunk is the pooled buffer that holds the frame next returned, when
	// that frame was larger than r's buffer (and than chunkSize) and at
	// most largeFrame: until the reader takes it (takeChunk), next returns
	// it to its pool.
	chunk []byte

	// The reader reads these fields for every frame. Padded from 184 to
	// 192 bytes, a size class of whole cache lines, they share no line
	// with objects that other processors write, such as messages of 80
	// bytes (see Ref in package actor; TestFrameReaderOwnsItsCacheLines).
	_ [8]byte
}

// newFrameReader returns a reader of the frames of r whose buffer is small
// until establish grows it, and then grows to size bytes under traffic.
func newFrameReader(r io.Reader, size int) *frameReader {
	return &frameReader{r: *bufio.NewReaderSize(r, min(size, handshakeBufferSize)), src: r, size: size, max: handshakeMaxFrame, grown: true}
}

// establish gives the reader its buffer for messages (initialBufferSize,
// grown to its full size once traffic fills it) once the handshake has
// succeeded, and makes it read from src (r given to newFrameReader, or a
// reader over it) from now on. Bytes already buffered are kept.
func (fr *frameReader) establish(src io.Reader) {
	if fr.discard > 0 {
		fr.r.Discard(fr.discard) //nolint:errcheck // the bytes are buffered
		fr.discard = 0
	}
	fr.rebuffer(src, min(fr.size, initialBufferSize))
	fr.grown = fr.r.Size() >= fr.size
}

// grow gives the reader its full buffer, keeping the bytes buffered; the
// previous frame must have been discarded.
func (fr *frameReader) grow() {
	fr.rebuffer(fr.src, fr.size)
	fr.grown = true
}

// rebuffer makes the reader read src through a new buffer of size bytes,
// the bytes buffered now first: the source becomes those bytes and then
// src, so that what is read past the buffer (readPast) comes after them
// too.
func (fr *frameReader) rebuffer(src io.Reader, size int) {
	if n := fr.r.Buffered(); n > 0 {
		rest, _ := fr.r.Peek(n)
		src = io.MultiReader(bytes.NewReader(bytes.Clone(rest)), src)
	}
	fr.src = src
	fr.r = *bufio.NewReaderSize(src, size)
}

// midFrame reports whether the reader waits for the rest of a frame, as
// opposed to the start of the next one.
func (fr *frameReader) midFrame() bool { return fr.inFrame || fr.buffered() }

// buffered reports whether bytes past the current frame are buffered: if
// not, the next frame is read from the source.
func (fr *frameReader) buffered() bool { return fr.r.Buffered() > fr.discard }

// frameBuffered reports whether the next frame is buffered whole, so that
// next returns it without reading the source.
func (fr *frameReader) frameBuffered() bool {
	n := fr.r.Buffered() - fr.discard
	if n < frameHeaderLen {
		return false
	}
	hdr, err := fr.r.Peek(fr.discard + frameHeaderLen)
	if err != nil {
		return false
	}
	return uint64(binary.BigEndian.Uint32(hdr[fr.discard:])) <= uint64(n-frameHeaderLen)
}

// next returns the body of the next frame.
func (fr *frameReader) next() ([]byte, error) {
	if fr.chunk != nil {
		recycleChunk(fr.chunk)
		fr.chunk = nil
	}
	if fr.discard > 0 {
		fr.r.Discard(fr.discard) //nolint:errcheck // the bytes are buffered
		fr.discard = 0
	}
	defer func() { fr.inFrame = false }()
	n, err := fr.header()
	if err != nil {
		return nil, err
	}
	if uint64(n) > uint64(fr.max) {
		return nil, &FrameTooLargeError{Size: n, Limit: fr.max}
	}
	size := int(n)
	fr.inFrame = true
	if !fr.grown && size > fr.r.Size() {
		fr.grow() // frames of this connection do not fit the small buffer
	}
	if size <= fr.r.Size() {
		b, err := fr.r.Peek(size)
		if err != nil {
			return nil, unexpected(err)
		}
		fr.discard = size
		return b, nil
	}
	if size > chunkSize && size <= largeFrame {
		// Read into a pooled chunk, which the reader may hand on with
		// the message (takeChunk).
		b := getChunk(size, false)[:size]
		if err := fr.readPast(b); err != nil {
			recycleChunk(b)
			return nil, unexpected(err)
		}
		fr.chunk = b
		return b, nil
	}
	// A larger frame: read into the frame buffer, growing it only as the
	// bytes arrive.
	fr.buf = fr.buf[:0]
	for len(fr.buf) < size {
		chunk := min(size-len(fr.buf), largeFrame)
		start := len(fr.buf)
		fr.buf = append(fr.buf, make([]byte, chunk)...)
		if _, err := io.ReadFull(&fr.r, fr.buf[start:]); err != nil {
			fr.buf = nil
			return nil, unexpected(err)
		}
	}
	b := fr.buf
	if cap(fr.buf) > 4*largeFrame {
		fr.buf = nil // do not keep a big buffer for the connection's lifetime
	}
	return b, nil
}

// header reads the next frame's length prefix and consumes it.
func (fr *frameReader) header() (uint32, error) {
	past := fr.past
	fr.past = false
	if past && fr.r.Buffered() == 0 {
		return fr.headerPast()
	}
	hdr, err := fr.r.Peek(frameHeaderLen)
	if err == nil && !fr.grown && fr.r.Buffered() == fr.r.Size() {
		fr.grow() // the traffic fills the small buffer
		hdr, err = fr.r.Peek(frameHeaderLen)
	}
	if err != nil {
		if err == io.EOF && len(hdr) > 0 {
			return 0, unexpected(err)
		}
		return 0, err
	}
	fr.r.Discard(frameHeaderLen) //nolint:errcheck // peeked
	return binary.BigEndian.Uint32(hdr), nil
}

// takeChunk returns the pooled chunk that holds the frame next returned,
// which the caller then owns (and returns to its pool with recycleChunk), or
// nil when the frame has none.
func (fr *frameReader) takeChunk() []byte {
	b := fr.chunk
	fr.chunk = nil
	return b
}

// unexpected turns the end of the stream inside a frame into a protocol
// error: the frame was truncated.
func unexpected(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: truncated frame: %w", ErrProtocol, io.ErrUnexpectedEOF)
	}
	return err
}

// appendFrame appends msg as one frame.
func appendFrame(dst []byte, msg proto.Message) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst, err := proto.MarshalOptions{}.MarshalAppend(dst, msg)
	if err != nil {
		return dst[:start], err
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-frameHeaderLen))
	return dst, nil
}

// readMessage reads the next frame and unmarshals it into msg.
func (fr *frameReader) readMessage(msg proto.Message) error {
	b, err := fr.next()
	if err != nil {
		return err
	}
	if err := proto.Unmarshal(b, msg); err != nil {
		return fmt.Errorf("%w: malformed %s: %v", ErrProtocol, msg.ProtoReflect().Descriptor().Name(), err)
	}
	return nil
}

// Field numbers of messages.WireEnvelope.
const (
	fieldTarget        = 1
	fieldSenderAddress = 2
	fieldSenderID      = 3
	fieldType          = 4
	fieldPayload       = 5
)

// sizeOpts sizes payloads; marshalOpts then marshals them with the size
// that sizeOpts cached.
var (
	sizeOpts    = proto.MarshalOptions{}
	marshalOpts = proto.MarshalOptions{UseCachedSize: true}
)

// encodeError is a message that could not be marshalled.
type encodeError struct{ err error }

func (e *encodeError) Error() string { return "netty: cannot encode message: " + e.err.Error() }
func (e *encodeError) Unwrap() error { return e.err }

// envelopeHeader is a WireEnvelope sized but not yet written.
type envelopeHeader struct {
	target, senderAddr, senderID, typ string
	psize                             int    // size of the marshalled message
	vt                                bool   // msg has vtprotobuf's methods (see messageSize)
	size                              int    // size of the whole envelope
	ref                               uint64 // the names' reference (refs.go), 0 for none
}

// sizeEnvelope computes the exact size of the envelope of msg (and caches
// msg's size for writeEnvelope). A body over limit is errTooLarge.
func sizeEnvelope(target, senderAddr, senderID string, msg proto.Message, limit int) (envelopeHeader, error) {
	if msg == nil {
		return envelopeHeader{}, &encodeError{errors.New("nil message")}
	}
	info := encodeInfoOf(msg)
	h := envelopeHeader{target: target, senderAddr: senderAddr, senderID: senderID, typ: string(info.name)}
	var err error
	if h.psize, h.vt, err = messageSize(msg, info); err != nil {
		return h, &encodeError{err}
	}
	h.size = envelopeSize(target, senderAddr, senderID, h.typ, h.psize)
	if h.size > limit {
		return h, errTooLarge
	}
	return h, nil
}

// writeEnvelope appends the frame of h (length prefix included) to dst,
// marshalling msg in place. On error dst is returned unchanged.
func writeEnvelope(dst []byte, h *envelopeHeader, msg proto.Message) ([]byte, error) {
	start := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.size)) //nolint:gosec // bounded by the limit
	if h.ref != 0 {
		dst = append(dst, fieldRef<<3|byte(protowire.VarintType))
		dst = protowire.AppendVarint(dst, h.ref)
	} else {
		dst = appendString(dst, fieldTarget, h.target)
		dst = appendString(dst, fieldSenderAddress, h.senderAddr)
		dst = appendString(dst, fieldSenderID, h.senderID)
		dst = appendString(dst, fieldType, h.typ)
	}
	dst = protowire.AppendTag(dst, fieldPayload, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(h.psize))
	pstart := len(dst)
	dst, err := appendMessage(dst, msg, h.psize, h.vt)
	if err != nil {
		return dst[:start], &encodeError{err}
	}
	if len(dst)-pstart != h.psize {
		// The message changed between Size and Marshal (messages must be
		// immutable once sent): do not send a corrupt frame.
		return dst[:start], &encodeError{errors.New("message modified while being sent")}
	}
	return dst, nil
}

// appendEnvelope appends one frame holding a messages.WireEnvelope to dst
// and returns the body's size. A body over limit is errTooLarge (with the
// size); on error dst is returned unchanged.
func appendEnvelope(dst []byte, target, senderAddr, senderID string, msg proto.Message, limit int) ([]byte, int, error) {
	h, err := sizeEnvelope(target, senderAddr, senderID, msg, limit)
	if err != nil {
		return dst, h.size, err
	}
	dst, err = writeEnvelope(dst, &h, msg)
	return dst, h.size, err
}

// errTooLarge is the internal error of a frame over the limit; Send turns
// it into an *actor.MessageTooLargeError.
var errTooLarge = errors.New("too large")

func envelopeSize(target, senderAddr, senderID, typ string, psize int) int {
	n := 0
	for _, s := range [...]string{target, senderAddr, senderID, typ} {
		if s != "" {
			n += 1 + protowire.SizeBytes(len(s))
		}
	}
	return n + 1 + protowire.SizeBytes(psize)
}

func appendString(dst []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return dst
	}
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	return protowire.AppendString(dst, s)
}

// envelope is a decoded messages.WireEnvelope whose fields alias the frame.
type envelope struct {
	target, senderAddr, senderID, typ, payload []byte
	ref                                        uint64 // a reference to names defined before (refs.go), 0 for none
}

// isReply reports whether the frame is a reply: it has no sender id and
// goes to a future (what isReply says of it on the sending side).
func (e *envelope) isReply() bool {
	return len(e.senderID) == 0 && isFutureID(e.target)
}

// parseEnvelope decodes a WireEnvelope frame without copying. Unknown fields
// are skipped, as protobuf requires.
//
// Every field of an envelope that writeEnvelope makes has a one-byte tag,
// and every field shorter than 128 bytes (in practice all but a large
// payload) a one-byte length: those are read in place, anything else
// through protowire (parseField).
func parseEnvelope(b []byte) (envelope, error) {
	var e envelope
	for len(b) > 0 {
		if b[0] == fieldRef<<3|byte(protowire.VarintType) && len(b) > 1 && b[1] < 0x80 && b[1] > 0 {
			e.ref = uint64(b[1])
			b = b[2:]
			continue
		}
		if t := b[0]; protowire.Type(t&7) == protowire.BytesType && t>>3 >= fieldTarget && t>>3 <= fieldPayload &&
			len(b) > 1 && b[1] < 0x80 {
			end := 2 + int(b[1])
			if end > len(b) {
				return envelope{}, malformedEnvelope(io.ErrUnexpectedEOF)
			}
			e.set(protowire.Number(t>>3), b[2:end])
			b = b[end:]
			continue
		}
		n, err := e.parseField(b)
		if err != nil {
			return envelope{}, err
		}
		b = b[n:]
	}
	if e.ref != 0 {
		if len(e.target) > 0 || len(e.senderID) > 0 || len(e.typ) > 0 {
			return envelope{}, fmt.Errorf("%w: envelope with a reference and names of its own", ErrProtocol)
		}
		return e, nil
	}
	if len(e.target) == 0 {
		return envelope{}, fmt.Errorf("%w: envelope without target", ErrProtocol)
	}
	if len(e.typ) == 0 {
		return envelope{}, fmt.Errorf("%w: envelope without message type", ErrProtocol)
	}
	return e, nil
}

// set keeps v as field num of the envelope.
func (e *envelope) set(num protowire.Number, v []byte) {
	switch num {
	case fieldTarget:
		e.target = v
	case fieldSenderAddress:
		e.senderAddr = v
	case fieldSenderID:
		e.senderID = v
	case fieldType:
		e.typ = v
	case fieldPayload:
		e.payload = v
	}
}

// parseField reads the field at the start of b through protowire, keeps it
// if it is one of the envelope's, and returns its length.
func (e *envelope) parseField(b []byte) (int, error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return 0, malformedEnvelope(protowire.ParseError(n))
	}
	var m int
	switch {
	case num == fieldRef && typ == protowire.VarintType:
		if e.ref, m = protowire.ConsumeVarint(b[n:]); m >= 0 && e.ref == 0 {
			return 0, malformedEnvelope(errors.New("reference 0"))
		}
	case typ != protowire.BytesType || num < fieldTarget || num > fieldPayload:
		m = protowire.ConsumeFieldValue(num, typ, b[n:])
	default:
		var v []byte
		if v, m = protowire.ConsumeBytes(b[n:]); m >= 0 {
			e.set(num, v)
		}
	}
	if m < 0 {
		return 0, malformedEnvelope(protowire.ParseError(m))
	}
	return n + m, nil
}

// malformedEnvelope is the error of an envelope that protobuf cannot read:
// an ErrProtocol that says why.
func malformedEnvelope(cause error) error {
	return fmt.Errorf("%w: malformed envelope: %v", ErrProtocol, cause)
}
