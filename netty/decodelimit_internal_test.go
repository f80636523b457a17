package netty

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/structpb"
)

// measuredRatio and measuredSlack bound what decoding a payload of n bytes
// of any shipped message type allocates, as measured: measuredRatio×n +
// measuredSlack (docs/design.md, "Decode bound"). The estimate the decoder
// enforces (decodeRatio, decodeSlack) is stricter than what it lets through
// costs.
const (
	measuredRatio = 2 * decodeRatio
	measuredSlack = 64 << 10
)

// shippedTypes returns every message type of the messages package.
func shippedTypes(t testing.TB) []protoreflect.MessageType {
	t.Helper()
	var out []protoreflect.MessageType
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		if strings.HasPrefix(string(mt.Descriptor().FullName()), "sparkrpc.messages.") {
			out = append(out, mt)
		}
		return true
	})
	if len(out) < 20 {
		t.Fatalf("found %d message types of package messages", len(out))
	}
	return out
}

// worstPayloads returns payloads of about size bytes of md that decode into
// the most memory the wire format allows: each list, map or packed field
// full of empty elements, and the same inside each sub-message, down to
// depth 3.
func worstPayloads(md protoreflect.MessageDescriptor, size, depth int) [][]byte {
	var out [][]byte
	fill := func(elem []byte) []byte {
		b := make([]byte, 0, size+len(elem))
		for len(b) < size {
			b = append(b, elem...)
		}
		return b
	}
	fs := md.Fields()
	for i := range fs.Len() {
		f := fs.Get(i)
		num := f.Number()
		empty := protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.BytesType), 0)
		switch {
		case f.IsMap(), f.IsList() && (f.Message() != nil || f.Kind() == protoreflect.StringKind || f.Kind() == protoreflect.BytesKind):
			out = append(out, fill(empty))
		case f.IsList():
			// Packed zeros, and unpacked ones.
			packed := protowire.AppendTag(nil, num, protowire.BytesType)
			packed = protowire.AppendVarint(packed, uint64(size))
			packed = append(packed, make([]byte, size)...)
			out = append(out, packed)
			var one []byte
			switch packedWidth(f.Kind()) {
			case 4:
				one = protowire.AppendFixed32(protowire.AppendTag(nil, num, protowire.Fixed32Type), 0)
			case 8:
				one = protowire.AppendFixed64(protowire.AppendTag(nil, num, protowire.Fixed64Type), 0)
			default:
				one = protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), 0)
			}
			out = append(out, fill(one))
		}
		if f.Message() != nil && !f.IsMap() && depth < 3 {
			for _, inner := range worstPayloads(f.Message(), size, depth+1) {
				b := protowire.AppendTag(nil, num, protowire.BytesType)
				out = append(out, protowire.AppendBytes(b, inner))
			}
		}
	}
	return out
}

// Every shipped message type, fed the payloads that decode into the most
// memory, either refuses them (*DecodeLimitError) or decodes them within
// measuredRatio×size + measuredSlack bytes. And the estimate the bound is
// enforced on is at least half of what the decode allocates, for each of
// them, refused or not: so a payload just within the bound, of any mix of
// fields, allocates at most twice the bound.
func TestDecodeCostIsBounded(t *testing.T) {
	const size = 256 << 10
	worst, refused := 0.0, 0
	for _, mt := range shippedTypes(t) {
		typ, err := findMessageType([]byte(mt.Descriptor().FullName()))
		if err != nil {
			t.Fatal(err)
		}
		for _, payload := range worstPayloads(mt.Descriptor(), size, 0) {
			if typ.cost != nil {
				unchecked := *typ
				unchecked.cost = nil
				var msg proto.Message
				n := testutil.AllocatedBytes(func() { msg, _ = unchecked.decode(payload) })
				runtime.KeepAlive(msg)
				est, _ := typ.cost.cost(payload, 0, 1<<62)
				if int64(n) > 2*est+measuredSlack {
					t.Errorf("%s: %d bytes decode into %d bytes, estimated at %d", mt.Descriptor().FullName(), len(payload), n, est)
				}
			}
			var msg proto.Message
			var derr error
			n := testutil.AllocatedBytes(func() { msg, derr = typ.decode(payload) })
			runtime.KeepAlive(msg)
			var le *DecodeLimitError
			switch {
			case errors.As(derr, &le):
				refused++
				continue
			case derr != nil:
				t.Errorf("%s: %v", mt.Descriptor().FullName(), derr)
				continue
			}
			worst = max(worst, float64(n)/float64(len(payload)))
			if bound := uint64(measuredRatio*len(payload) + measuredSlack); n > bound {
				t.Errorf("%s: %d bytes decoded into %d bytes, over %d", mt.Descriptor().FullName(), len(payload), n, bound)
			}
		}
	}
	t.Logf("worst accepted payload: %.1f bytes allocated per byte; %d payloads refused", worst, refused)
	if refused == 0 {
		t.Error("no payload refused: the worst cases were not built")
	}
}

// The payload of the reproduced attack, repeated empty sub-messages, is
// refused before it is decoded.
func TestRepeatedEmptySubMessagesAreRefused(t *testing.T) {
	typ, err := findMessageType([]byte("sparkrpc.messages.AmAllocateResponse"))
	if err != nil {
		t.Fatal(err)
	}
	payload := worstPayloads((&messages.AmAllocateResponse{}).ProtoReflect().Descriptor(), 1<<20, 2)[0]
	var derr error
	n := testutil.AllocatedBytes(func() { _, derr = typ.decode(payload) })
	var le *DecodeLimitError
	if !errors.As(derr, &le) {
		t.Fatalf("decode of %d bytes of empty sub-messages = %v, want a *DecodeLimitError", len(payload), derr)
	}
	if n > 64<<10 {
		t.Errorf("refusing it allocated %d bytes", n)
	}
	t.Log(le)
}

// Well-formed messages with content are never refused, however many
// elements their lists and maps hold.
func TestDecodeBoundAcceptsRealMessages(t *testing.T) {
	for _, mt := range shippedTypes(t) {
		msg := mt.New()
		fillMessage(msg, 0)
		payload, err := proto.Marshal(msg.Interface())
		if err != nil {
			t.Fatal(err)
		}
		typ, err := findMessageType([]byte(mt.Descriptor().FullName()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := typ.decode(payload); err != nil {
			t.Errorf("%s of %d bytes: %v", mt.Descriptor().FullName(), len(payload), err)
		}
	}
}

// fillMessage sets every field of m to plausible content: short strings,
// 200 elements in each list and map.
func fillMessage(m protoreflect.Message, depth int) {
	fs := m.Descriptor().Fields()
	for i := range fs.Len() {
		f := fs.Get(i)
		if f.ContainingOneof() != nil && i > 0 && fs.Get(i-1).ContainingOneof() == f.ContainingOneof() {
			continue
		}
		switch {
		case f.IsMap():
			mp := m.Mutable(f).Map()
			for j := range 200 {
				k := protoreflect.ValueOfString("key-" + strings.Repeat("k", j%5) + string(rune('a'+j%26)) + string(rune('a'+j/26)))
				if f.MapKey().Kind() != protoreflect.StringKind {
					k = scalar(f.MapKey(), j)
				}
				if f.MapValue().Message() != nil {
					v := mp.NewValue()
					fillMessage(v.Message(), depth+1)
					mp.Set(k.MapKey(), v)
				} else {
					mp.Set(k.MapKey(), scalar(f.MapValue(), j))
				}
			}
		case f.IsList():
			l := m.Mutable(f).List()
			for j := range 200 {
				if f.Message() != nil {
					if depth > 2 {
						break
					}
					v := l.NewElement()
					fillMessage(v.Message(), depth+1)
					l.Append(v)
				} else {
					l.Append(scalar(f, j))
				}
			}
		case f.Message() != nil:
			if depth < 3 {
				fillMessage(m.Mutable(f).Message(), depth+1)
			}
		default:
			m.Set(f, scalar(f, 7))
		}
	}
}

// scalar returns a plausible value of f's kind.
func scalar(f protoreflect.FieldDescriptor, j int) protoreflect.Value {
	switch f.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("value-" + strings.Repeat("x", j%7))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte("bytes-value-" + strings.Repeat("y", j%7)))
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(j%2 == 1)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(j % 2))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(j))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(j))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(j))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(j))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(j))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(float64(j))
	}
	panic("kind " + f.Kind().String())
}

// Sub-messages nested deeper than decodeDepthLimit are refused before the
// decoder recurses into them.
func TestDeepNestingIsRefused(t *testing.T) {
	v := structpb.NewNullValue()
	for range decodeDepthLimit {
		v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{v}})
	}
	payload, err := proto.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	typ, err := findMessageType([]byte("google.protobuf.Value"))
	if err != nil {
		t.Fatal(err)
	}
	var le *DecodeLimitError
	if _, err := typ.decode(payload); !errors.As(err, &le) || le.Cost != 0 {
		t.Fatalf("decode of %d levels = %v, want a *DecodeLimitError for nesting", 2*decodeDepthLimit, err)
	}
}
