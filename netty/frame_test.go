package netty

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// NettyRpcEnvSuite "RequestMessage serialization": an envelope written by
// appendEnvelope reads back through parseEnvelope and through the generated
// messages.WireEnvelope, with and without a sender, with an empty message.
func TestRequestMessageSerialization(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		target, senderAddr, senderID string
		msg                          proto.Message
	}{
		{"with sender", "receiver", "localhost:12345", "future$7", wrapperspb.String("hello")},
		{"without sender", "receiver", "", "", wrapperspb.String("hello")},
		{"empty message", "receiver", "client-1", "future$8", &messages.CheckExistence{}},
		{"endpoint ref", "r", "", "", &messages.EndpointRef{Address: "[::1]:7077", Name: "n", Client: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, n, err := appendEnvelope([]byte("prefix"), tc.target, tc.senderAddr, tc.senderID, tc.msg, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(b, []byte("prefix")) {
				t.Fatal("prefix lost")
			}
			b = b[len("prefix"):]
			if int(binary.BigEndian.Uint32(b)) != n || len(b) != n+4 {
				t.Fatalf("length prefix %d, body %d, reported %d", binary.BigEndian.Uint32(b), len(b)-4, n)
			}
			e, err := parseEnvelope(b[4:])
			if err != nil {
				t.Fatal(err)
			}
			var w messages.WireEnvelope
			if err := proto.Unmarshal(b[4:], &w); err != nil {
				t.Fatal(err)
			}
			typ := string(tc.msg.ProtoReflect().Descriptor().FullName())
			if string(e.target) != tc.target || string(e.senderAddr) != tc.senderAddr || string(e.senderID) != tc.senderID || string(e.typ) != typ {
				t.Fatalf("parsed %+v", e)
			}
			if w.Target != tc.target || w.SenderAddress != tc.senderAddr || w.SenderId != tc.senderID || w.Type != typ || !bytes.Equal(w.Payload, e.payload) {
				t.Fatalf("generated %v", &w)
			}
			got := tc.msg.ProtoReflect().New().Interface()
			if err := proto.Unmarshal(e.payload, got); err != nil || !proto.Equal(got, tc.msg) {
				t.Fatalf("payload %v, %v", got, err)
			}
			// The generated encoder's output parses the same.
			wb, _ := proto.Marshal(&w)
			e2, err := parseEnvelope(wb)
			if err != nil || string(e2.target) != tc.target || !bytes.Equal(e2.payload, e.payload) {
				t.Fatalf("reparse %+v, %v", e2, err)
			}
		})
	}
}

func TestAppendEnvelopeTooLarge(t *testing.T) {
	msg := wrapperspb.Bytes(make([]byte, 1000))
	b, n, err := appendEnvelope([]byte("x"), "t", "", "", msg, 500)
	if err != errTooLarge || n <= 1000 || string(b) != "x" {
		t.Fatalf("err %v, size %d, buf %q", err, n, b)
	}
	// An invalid message leaves the buffer as it was.
	b, _, err = appendEnvelope([]byte("x"), "t", "", "", wrapperspb.String("\xff"), 500)
	if err == nil || string(b) != "x" {
		t.Fatalf("err %v, buf %q", err, b)
	}
}

func TestFrameReader(t *testing.T) {
	var stream []byte
	small, _ := appendFrame(nil, wrapperspb.String("small"))
	large, _ := appendFrame(nil, wrapperspb.Bytes(bytes.Repeat([]byte{7}, 3*largeFrame)))
	stream = append(append(append(stream, small...), large...), small...)
	fr := newFrameReader(bytes.NewReader(stream), 4096)
	fr.max = 4 * largeFrame
	for i, want := range [][]byte{small[4:], large[4:], small[4:]} {
		got, err := fr.next()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("frame %d: %d bytes, %v", i, len(got), err)
		}
	}
	if _, err := fr.next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
	fr = newFrameReader(bytes.NewReader(large), 4096)
	fr.max = largeFrame
	var tl *FrameTooLargeError
	if _, err := fr.next(); !errors.As(err, &tl) || !errors.Is(err, ErrProtocol) {
		t.Fatalf("too large: %v", err)
	}
	fr = newFrameReader(bytes.NewReader(small[:len(small)-1]), 4096)
	if _, err := fr.next(); !errors.Is(err, ErrProtocol) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated: %v", err)
	}
}

// A frame reader starts with a small buffer and keeps what it buffered when
// it grows to its full size after the handshake.
func TestFrameReaderEstablishKeepsBufferedBytes(t *testing.T) {
	var stream []byte
	stream, _ = appendFrame(stream, &messages.HandshakeResult{})
	for _, s := range []string{"first", "second"} {
		stream, _ = appendFrame(stream, &messages.WireEnvelope{Target: s, Type: "t"})
	}
	src := bytes.NewReader(stream)
	fr := newFrameReader(src, readBufferSize)
	if got := fr.r.Size(); got != handshakeBufferSize {
		t.Fatalf("buffer before the handshake: %d bytes", got)
	}
	var res messages.HandshakeResult
	if err := fr.readMessage(&res); err != nil {
		t.Fatal(err)
	}
	if fr.r.Buffered() == 0 {
		t.Fatal("test needs frames buffered behind the handshake")
	}
	fr.establish(src)
	if got := fr.r.Size(); got != initialBufferSize {
		t.Fatalf("buffer after the handshake: %d bytes", got)
	}
	fr.max = 1 << 20
	for _, want := range []string{"first", "second"} {
		var e messages.WireEnvelope
		if err := fr.readMessage(&e); err != nil || e.Target != want {
			t.Fatalf("got %v, %v; want %s", &e, err, want)
		}
	}
	if _, err := fr.next(); err != io.EOF {
		t.Fatalf("after the frames: %v", err)
	}
}

// An established reader grows its buffer to its full size, keeping what
// it buffered, once a frame does not fit or the traffic fills it; frames
// read across the growth keep their bytes and order.
func TestFrameReaderGrowsUnderTraffic(t *testing.T) {
	for _, tc := range []struct {
		name string
		body int // payload of each frame
	}{
		{"small frames fill the buffer", 100},
		{"a frame larger than the buffer", 3 * initialBufferSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stream []byte
			const frames = 200
			for i := range frames {
				stream, _ = appendFrame(stream, &messages.WireEnvelope{Target: fmt.Sprint(i), Payload: make([]byte, tc.body)})
			}
			fr := newFrameReader(bytes.NewReader(stream), readBufferSize)
			fr.establish(fr.src)
			fr.max = 1 << 20
			for i := range frames {
				var e messages.WireEnvelope
				if err := fr.readMessage(&e); err != nil || e.Target != fmt.Sprint(i) || len(e.Payload) != tc.body {
					t.Fatalf("frame %d: got target %q with %d bytes, %v", i, e.Target, len(e.Payload), err)
				}
			}
			if got := fr.r.Size(); got != readBufferSize {
				t.Fatalf("buffer after the traffic: %d bytes, want %d", got, readBufferSize)
			}
			if _, err := fr.next(); err != io.EOF {
				t.Fatalf("after the frames: %v", err)
			}
		})
	}
}

// checkEnvelopeAgrees fails t unless parseEnvelope's result for b (e, err)
// is what reading every field through protowire gives (readEnvelopeFields),
// and, where the generated messages.WireEnvelope reads b, what it reads. An
// error must be ErrProtocol. (The envelope's strings are not checked for
// UTF-8: a bad target or type is refused later as an unknown endpoint or
// type.)
func checkEnvelopeAgrees(t *testing.T, b []byte, e envelope, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, ErrProtocol) {
		t.Fatalf("parseEnvelope: %v, not ErrProtocol", err)
	}
	ref, ok := readEnvelopeFields(b)
	if (err == nil) != ok {
		t.Fatalf("parseEnvelope: %+v, %v; field by field: %+v, readable %v", e, err, ref, ok)
	}
	if err != nil {
		return
	}
	if !bytes.Equal(e.target, ref.target) || !bytes.Equal(e.senderAddr, ref.senderAddr) || !bytes.Equal(e.senderID, ref.senderID) ||
		!bytes.Equal(e.typ, ref.typ) || !bytes.Equal(e.payload, ref.payload) || e.ref != ref.ref {
		t.Fatalf("parseEnvelope: %+v; field by field: %+v", e, ref)
	}
	var w messages.WireEnvelope
	if proto.Unmarshal(b, &w) != nil {
		return
	}
	if w.Target != string(e.target) || w.SenderAddress != string(e.senderAddr) || w.SenderId != string(e.senderID) ||
		w.Type != string(e.typ) || !bytes.Equal(w.Payload, e.payload) || w.Ref != e.ref {
		t.Fatalf("parseEnvelope: %+v; protobuf: %v", e, &w)
	}
}

// readEnvelopeFields reads b field by field through protowire, the test's
// own reference for where each field starts and ends: the envelope's fields
// (the last of each number wins), and whether b is well formed and has a
// target and a type, or a reference (not 0) and none of the names.
func readEnvelopeFields(b []byte) (envelope, bool) {
	var e envelope
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return e, false
		}
		b = b[n:]
		if num == fieldRef && typ == protowire.VarintType {
			if e.ref, n = protowire.ConsumeVarint(b); n < 0 || e.ref == 0 {
				return e, false
			}
			b = b[n:]
			continue
		}
		if typ != protowire.BytesType || num < fieldTarget || num > fieldPayload {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return e, false
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return e, false
		}
		b = b[n:]
		e.set(num, v) // which field is which, checkEnvelopeAgrees holds to protobuf
	}
	if e.ref != 0 {
		return e, len(e.target) == 0 && len(e.senderID) == 0 && len(e.typ) == 0
	}
	return e, len(e.target) > 0 && len(e.typ) > 0
}

// parseEnvelope reads fields in place where tag and length take one byte
// each, and through protowire otherwise; both agree with protobuf, and a
// frame that cannot be read field by field, or one without target or type,
// is refused with ErrProtocol.
func TestParseEnvelopeAgreesWithProtobuf(t *testing.T) {
	long := string(bytes.Repeat([]byte("t"), 200)) // a two-byte length
	field := func(num protowire.Number, v string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, num, protowire.BytesType), v)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	valid := []struct {
		name  string
		frame []byte
	}{
		{"written", mustEnvelope(appendEnvelope(nil, "echo", "127.0.0.1:1", "future$.1", wrapperspb.String("hi"), 1<<20))[frameHeaderLen:]},
		{"long target", mustEnvelope(appendEnvelope(nil, long, "", "", wrapperspb.Bytes(make([]byte, 300)), 1<<20))[frameHeaderLen:]},
		{"length 127", cat(field(fieldTarget, long[:127]), field(fieldType, "t"))},
		{"length 128", cat(field(fieldTarget, long[:128]), field(fieldType, "t"))},
		{"length 129", cat(field(fieldTarget, long[:129]), field(fieldType, "t"))},
		{"a group", cat(field(fieldTarget, "a"), []byte{6<<3 | byte(protowire.StartGroupType), 6<<3 | byte(protowire.EndGroupType)}, field(fieldType, "t"))},
		{"any order", cat(field(fieldType, "t"), field(fieldPayload, "p"), field(fieldTarget, "x"))},
		{"repeated: the last wins", cat(field(fieldTarget, "a"), field(fieldType, "t"), field(fieldTarget, "b"))},
		{"unknown fields", cat(field(fieldTarget, "a"), protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 300),
			field(12, "skip"), field(fieldType, "t"))},
		{"known number, other wire type", cat(field(fieldTarget, "a"), protowire.AppendVarint(protowire.AppendTag(nil, fieldSenderID, protowire.VarintType), 1),
			field(fieldType, "t"))},
		{"two-byte tag", cat(field(fieldTarget, "a"), field(fieldType, "t"), field(100, "x"))},
	}
	for _, tc := range valid {
		t.Run(tc.name, func(t *testing.T) {
			e, err := parseEnvelope(tc.frame)
			if err != nil {
				t.Fatal(err)
			}
			checkEnvelopeAgrees(t, tc.frame, e, err)
		})
	}
	invalid := []struct {
		name  string
		frame []byte
	}{
		{"length past the end", cat(field(fieldTarget, "a"), field(fieldType, "t"))[:5]},
		{"length of a long field past the end", field(fieldTarget, long)[:100]},
		{"truncated length", []byte{fieldTarget<<3 | byte(protowire.BytesType), 0x80}},
		{"tag alone", []byte{fieldTarget<<3 | byte(protowire.BytesType)}},
		{"field number 0", cat([]byte{0x02, 0x00}, field(fieldTarget, "a"), field(fieldType, "t"))},
		{"empty", nil},
		{"no target", field(fieldType, "t")},
		{"no type", field(fieldTarget, "a")},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			e, err := parseEnvelope(tc.frame)
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("parsed %+v, %v; want ErrProtocol", e, err)
			}
			checkEnvelopeAgrees(t, tc.frame, e, err)
		})
	}
}

// mustEnvelope returns the frame of an appendEnvelope that must not fail.
func mustEnvelope(b []byte, _ int, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
