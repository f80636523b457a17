package netty

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// codecSamples are messages with vtprotobuf methods (every field kind the
// project's protocol uses: scalars, bytes, strings, enums, maps, lists,
// nested messages, lists of nested messages) and one without.
func codecSamples() []proto.Message {
	return []proto.Message{
		&messages.BenchPing{Sender: 3, Seq: 1 << 40, Payload: []byte("0123456789abcdef")},
		&messages.RpcFailure{Code: messages.ErrorCode_ERROR_CODE_APPLICATION, Message: "boom é", Type: "t", Cause: "c"},
		&messages.RegisterExecutor{ExecutorId: "7", Hostname: "h", Cores: 4,
			LogUrls: map[string]string{"stdout": "http://x/stdout", "stderr": "http://x/stderr"}},
		&messages.AmAllocateResponse{
			Allocated: []*messages.RmContainer{{ContainerId: "c1", Resource: &messages.RmResource{MemoryMb: 512, Cores: 1}}, {ContainerId: "c2"}},
			Completed: []*messages.RmContainerStatus{{ContainerId: "c0", State: messages.RmContainerState_RM_CONTAINER_STATE_COMPLETE}},
		},
		&messages.SparkAppConfig{SparkProperties: map[string]string{"spark.app.name": "pi", "": ""}},
		wrapperspb.String("no vtprotobuf methods"),
	}
}

// The vtprotobuf codec and protobuf-go's agree on the wire: what one
// encodes the other decodes to an equal message, so peers need not agree on
// which they use.
func TestCodecsAgree(t *testing.T) {
	for _, msg := range codecSamples() {
		name := msg.ProtoReflect().Descriptor().FullName()
		size, vt, err := messageSize(msg, encodeInfoOf(msg))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := proto.Size(msg); size != want {
			t.Errorf("%s: size %d, protobuf-go %d", name, size, want)
		}
		if _, isVT := msg.(vtSizer); vt != isVT {
			t.Errorf("%s: vt = %v", name, vt)
		}
		prefix := []byte("prefix")
		ours, err := appendMessage(append([]byte(nil), prefix...), msg, size, vt)
		if err != nil || string(ours[:len(prefix)]) != string(prefix) || len(ours) != len(prefix)+size {
			t.Fatalf("%s: appendMessage = %d bytes, %v", name, len(ours), err)
		}
		ours = ours[len(prefix):]
		theirs, err := proto.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		mt, err := findMessageType([]byte(name))
		if err != nil {
			t.Fatal(err)
		}
		for what, b := range map[string][]byte{"ours": ours, "protobuf-go's": theirs} {
			got, err := mt.decode(b)
			if err != nil || !proto.Equal(got, msg) {
				t.Errorf("%s: our decode of %s encoding = %v, %v; want %v", name, what, got, err, msg)
			}
			plain := mt.mt.New().Interface()
			if err := proto.Unmarshal(b, plain); err != nil || !proto.Equal(plain, msg) {
				t.Errorf("%s: protobuf-go's decode of %s encoding = %v, %v", name, what, plain, err)
			}
		}
	}
}

// A string that is not valid UTF-8 is refused by both codecs, at any depth:
// protobuf-go refuses it itself, and the transport checks what vtprotobuf
// does not.
func TestCodecRefusesInvalidUTF8(t *testing.T) {
	bad := "\xff\xfe"
	for _, msg := range []proto.Message{
		&messages.RpcFailure{Message: bad},
		&messages.RegisterExecutor{LogUrls: map[string]string{"stdout": bad}},
		&messages.RegisterExecutor{LogUrls: map[string]string{bad: "x"}},
		&messages.AmAllocateResponse{Allocated: []*messages.RmContainer{{ContainerId: "ok"}, {ContainerId: bad}}},
		&messages.AmAllocate{Release: []string{"a", bad}},
		wrapperspb.String(bad),
	} {
		name := msg.ProtoReflect().Descriptor().FullName()
		size, vt, err := messageSize(msg, encodeInfoOf(msg))
		if vt || (err != nil && !errors.Is(err, errInvalidUTF8)) {
			t.Errorf("%s: messageSize = %d, %v, %v; want an invalid UTF-8 error or protobuf-go", name, size, vt, err)
		}
		if err == nil {
			// protobuf-go's size does not check; its marshal does.
			if _, err := appendMessage(nil, msg, size, vt); err == nil {
				t.Errorf("%s: encoded a string that is not UTF-8", name)
			}
		}
		// The same bytes on the wire, as a peer that does not check would
		// send them: decoded with an error, never delivered.
		b, err := proto.MarshalOptions{}.MarshalAppend(nil, validCopy(t, msg))
		if err != nil {
			t.Fatal(err)
		}
		b = corrupt(t, b, bad)
		mt, err := findMessageType([]byte(name))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := mt.decode(b); err == nil {
			t.Errorf("%s: decoded %v from a frame with invalid UTF-8", name, got)
		}
	}
}

// validCopy returns msg with every "\xff\xfe" replaced by "!!", so that
// protobuf-go marshals it; corrupt puts the bytes back on the wire.
func validCopy(t *testing.T, msg proto.Message) proto.Message {
	t.Helper()
	c := proto.Clone(msg)
	fix := func(v string) string {
		if v == "\xff\xfe" {
			return "!!"
		}
		return v
	}
	switch m := c.(type) {
	case *messages.RpcFailure:
		m.Message = fix(m.Message)
	case *messages.RegisterExecutor:
		urls := map[string]string{}
		for k, v := range m.LogUrls {
			urls[fix(k)] = fix(v)
		}
		m.LogUrls = urls
	case *messages.AmAllocateResponse:
		for _, c := range m.Allocated {
			c.ContainerId = fix(c.ContainerId)
		}
	case *messages.AmAllocate:
		for i := range m.Release {
			m.Release[i] = fix(m.Release[i])
		}
	case *wrapperspb.StringValue:
		m.Value = fix(m.Value)
	}
	return c
}

// corrupt replaces the one occurrence of "!!" in an encoded message by bad
// (of the same length, so no length prefix changes).
func corrupt(t *testing.T, b []byte, bad string) []byte {
	t.Helper()
	n := 0
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '!' && b[i+1] == '!' {
			copy(b[i:], bad)
			n++
		}
	}
	if n != 1 {
		t.Fatalf("found %d places to corrupt", n)
	}
	return b
}

// FuzzCodecDecode feeds arbitrary payloads to the transport's decoder of
// each sample type. It never panics. On a payload a correct encoder could
// have written (protobuf-go's deterministic encoding of what it decodes),
// it agrees with protobuf-go. On a malformed one the two may differ (a map
// entry's field with the wrong wire type, a singular field repeated with an
// earlier value that is not UTF-8), but what it delivers is always a message
// protobuf-go can encode and read back equal (its unknown fields aside,
// whose tags protobuf-go may re-encode shorter): nothing malformed gets
// through to an endpoint.
//
// The reader's decode (decodeOwned, with its byte slab) agrees with
// decode on every payload.
//
// A payload over the decode bound is refused (*DecodeLimitError) before
// it is decoded, well-formed or not; google.protobuf.Value, recursive and
// without vtprotobuf's methods, exercises the nesting limit.
func FuzzCodecDecode(f *testing.F) {
	samples := append(codecSamples(), structpb.NewStringValue("recursive"))
	for _, msg := range samples {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x0a, 0x02, 0xff, 0xfe})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, msg := range samples {
			mt, err := findMessageType([]byte(msg.ProtoReflect().Descriptor().FullName()))
			if err != nil {
				t.Fatal(err)
			}
			got, err := mt.decode(data)
			var s slabs
			owned, oerr := mt.decodeOwned(data, &s)
			if (err == nil) != (oerr == nil) || err == nil && !proto.Equal(got, owned) {
				t.Fatalf("%T: the reader's decode gave %v, %v; decode %v, %v", msg, owned, oerr, got, err)
			}
			var le *DecodeLimitError
			if errors.As(err, &le) {
				if mt.cost == nil {
					t.Fatalf("%T: refused by the decode bound, which it is not subject to: %v", msg, err)
				}
				continue
			}
			plain := mt.mt.New().Interface()
			if perr := proto.Unmarshal(data, plain); perr == nil {
				if b, _ := (proto.MarshalOptions{Deterministic: true}).Marshal(plain); bytes.Equal(b, data) && !hasUnknown(plain.ProtoReflect()) &&
					(err != nil || !proto.Equal(got, plain)) {
					t.Fatalf("%T: a well-formed payload decoded to %v, %v; protobuf-go %v", msg, got, err, plain)
				}
			}
			if err != nil {
				continue
			}
			b, err := proto.Marshal(got)
			if err != nil {
				t.Fatalf("%T: decoded %v, which protobuf-go cannot encode: %v", msg, got, err)
			}
			back := mt.mt.New().Interface()
			if err := proto.Unmarshal(b, back); err != nil || !proto.Equal(withoutUnknown(back), withoutUnknown(got)) {
				t.Fatalf("%T: decoded %v, which protobuf-go reads back as %v, %v", msg, got, back, err)
			}
		}
	})
}

// hasUnknown reports whether m holds unknown fields at any depth.
func hasUnknown(m protoreflect.Message) bool {
	found := len(m.GetUnknown()) > 0
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, v protoreflect.Value) bool {
					found = found || hasUnknown(v.Message())
					return !found
				})
			}
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				found = found || hasUnknown(v.List().Get(i).Message())
			}
		case fd.Message() != nil:
			found = found || hasUnknown(v.Message())
		}
		return !found
	})
	return found
}

// withoutUnknown returns a copy of m without unknown fields at any depth.
func withoutUnknown(m proto.Message) proto.Message {
	c := proto.Clone(m)
	var strip func(m protoreflect.Message)
	strip = func(m protoreflect.Message) {
		m.SetUnknown(nil)
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsMap():
				if fd.MapValue().Message() != nil {
					v.Map().Range(func(_ protoreflect.MapKey, v protoreflect.Value) bool {
						strip(v.Message())
						return true
					})
				}
			case fd.IsList() && fd.Message() != nil:
				for i := range v.List().Len() {
					strip(v.List().Get(i).Message())
				}
			case fd.Message() != nil:
				strip(v.Message())
			}
			return true
		})
	}
	strip(c.ProtoReflect())
	return c
}

// A sender's PID keeps an id of up to senderIDRoom bytes in its own
// allocation, and a longer one in a string of its own; either way the id
// is the sender's, and a later change to the frame's bytes does not reach it.
func TestSenderPID(t *testing.T) {
	for _, n := range []int{1, 21, senderIDRoom, senderIDRoom + 1, 200} {
		frame := bytes.Repeat([]byte{'x'}, n)
		pid := newSenderPID("host:1", frame)
		want := string(frame)
		frame[0] = 'y'
		if pid.Id != want || pid.Address != "host:1" {
			t.Errorf("newSenderPID of %d bytes = %q@%s, want %q@host:1", n, pid.Id, pid.Address, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { newSenderPID("host:1", []byte("future$.3w5e11264sgsf")) }); n > 1 {
		t.Errorf("newSenderPID: %.1f allocations, want 1", n)
	}
}
