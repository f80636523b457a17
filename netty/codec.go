// The message codec: the methods vtprotobuf generates when a type has them,
// protobuf-go's reflection-based codec otherwise.

package netty

import (
	"reflect"
	"slices"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Messages generated with protoc-gen-go-vtproto (github.com/planetscale/
// vtprotobuf, features marshal, unmarshal, size and clone) carry
// reflection-free methods that encode and decode several times faster than
// protobuf-go's generic codec; the transport uses them when a message has
// them. Both produce the same wire format, so peers need not agree on which
// one they use. What vtprotobuf's decoder accepts and protobuf-go's refuses
// (strings that are not valid UTF-8, malformed unknown fields) is checked
// after it (vtcheck.go), so that both accept the same frames.

// vtSizer is the encoding half of a vtprotobuf message.
type vtSizer interface {
	SizeVT() int
	MarshalToSizedBufferVT(dAtA []byte) (int, error)
}

// vtDecoder is the decoding half of a vtprotobuf message: CloneMessageVT
// of the type's zero value makes a new message without reflection.
type vtDecoder interface {
	CloneMessageVT() proto.Message
	UnmarshalVT(dAtA []byte) error
}

// vtLender is the decoder that vtprotobuf generates with its
// unmarshal_unsafe feature: the bytes and string fields of the message it
// decodes alias the payload instead of copying it (lend.go).
type vtLender interface {
	UnmarshalVTUnsafe(dAtA []byte) error
}

// messageSize returns the encoded size of msg, whose encodeInfo is info,
// and whether it is a vtprotobuf message. A vtprotobuf message is first
// checked for invalid UTF-8, which protobuf-go would refuse to marshal.
func messageSize(msg proto.Message, info encodeInfo) (int, bool, error) {
	if !info.vt {
		return sizeOpts.Size(msg), false, nil
	}
	switch {
	case info.fields != nil:
		if err := info.fields.check(msg); err != nil {
			return 0, false, err
		}
	case !info.plan.empty():
		if err := info.plan.check(msg.ProtoReflect()); err != nil {
			return 0, false, err
		}
	}
	return msg.(vtSizer).SizeVT(), true, nil
}

// appendMessage appends msg, of the encoded size size (messageSize), to dst.
func appendMessage(dst []byte, msg proto.Message, size int, vt bool) ([]byte, error) {
	if !vt {
		return marshalOpts.MarshalAppend(dst, msg)
	}
	start := len(dst)
	dst = slices.Grow(dst, size)[:start+size]
	n, err := msg.(vtSizer).MarshalToSizedBufferVT(dst[start:])
	if err != nil {
		return dst[:start], err
	}
	return dst[:start+n], nil
}

// messageType decodes the payloads of one message type.
type messageType struct {
	mt   protoreflect.MessageType
	name protoreflect.FullName
	zero vtDecoder // the type's zero value, when it is a vtprotobuf message
	// lends says zero is also a vtLender: its messages can alias their
	// payload.
	lends bool
	plan  *checkPlan // what to check after a vtprotobuf decode (see vtcheck.go)
	// fields is plan without protobuf reflection, when the type allows it
	// (see fieldcheck.go).
	fields *fieldCheck
	// unknown is the index of the generated struct's unknownFields, when
	// plan is empty and the type is generated: only unknown fields, at the
	// top level, can then need a check, and when the decoded message has
	// none it is not asked for its descriptor (see msginfo.go). -1 otherwise.
	unknown    int
	unknownOff uintptr      // and its offset in the struct
	goType     reflect.Type // the Go type of its messages
	// cost bounds what a payload may cost once decoded; nil when the
	// type's decode is bounded by a constant (decodelimit.go).
	cost *costPlan
	// slab says how the reader decodes the type's small messages into its
	// byte slab (slab.go); nil when it does not.
	slab *slabPlan
}

// findMessageType looks up the message type of the full name typ in the
// protobuf registry.
func findMessageType(typ []byte) (*messageType, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(typ))
	if err != nil {
		return nil, &errUnknownType{string(typ)}
	}
	t := &messageType{mt: mt, name: mt.Descriptor().FullName(), unknown: -1, goType: reflect.TypeOf(mt.Zero().Interface())}
	t.cost = costPlanOf(mt.Descriptor(), t.goType)
	if zero, ok := mt.New().Interface().(vtDecoder); ok {
		t.zero = zero // a new message, not Zero's nil pointer, which clones to nil
		_, t.lends = zero.(vtLender)
		if t.lends {
			t.slab = planSlab(mt.Descriptor(), t.goType)
		}
		t.plan = planChecks(mt.Descriptor())
		if m := zero.(proto.Message); oneDescriptorPerType(m) {
			if t.plan.empty() {
				if t.unknown = unknownFieldsIndex(t.goType); t.unknown >= 0 {
					t.unknownOff = t.goType.Elem().Field(t.unknown).Offset
				}
			} else {
				t.fields = planFieldCheck(t.goType, t.plan)
			}
		}
	}
	return t, nil
}

// decode unmarshals payload into a new message of the type.
// A payload whose decoded form would exceed the decode bound is a
// *DecodeLimitError, and is not decoded.
func (t *messageType) decode(payload []byte) (proto.Message, error) {
	return t.decodeAs(payload, false)
}

// lend unmarshals payload into a new message of the type whose bytes and
// string fields alias payload, which must then outlive the message; the
// type must lend (t.lends). Bound and checks are decode's.
func (t *messageType) lend(payload []byte) (proto.Message, error) {
	return t.decodeAs(payload, true)
}

// decodeAs is decode, or lend when alias is true.
func (t *messageType) decodeAs(payload []byte, alias bool) (proto.Message, error) {
	if t.cost != nil {
		if err := t.cost.check(t.name, payload); err != nil {
			return nil, err
		}
	}
	if t.zero == nil {
		msg := t.mt.New().Interface()
		if err := decodeOpts.Unmarshal(payload, msg); err != nil {
			return nil, err
		}
		return msg, nil
	}
	msg := t.zero.CloneMessageVT()
	var err error
	if alias {
		err = msg.(vtLender).UnmarshalVTUnsafe(payload)
	} else {
		err = msg.(vtDecoder).UnmarshalVT(payload)
	}
	if err != nil {
		return nil, err
	}
	return t.checked(msg)
}

// decodeOwned is decode for the reader of a connection: a small message
// of a flat type has its bytes and strings in the reader's byte slab
// (slab.go). Only the reader calls it.
func (t *messageType) decodeOwned(payload []byte, s *slabs) (proto.Message, error) {
	if t.slab == nil || len(payload) > slabMaxPayload {
		return t.decode(payload)
	}
	msg, err := t.lend(s.copyPayload(payload))
	if err != nil {
		return nil, err
	}
	t.slab.capBytes(msg)
	return msg, nil
}

// checked returns msg, decoded by vtprotobuf, once it has passed what
// protobuf-go's decoder would also have checked (vtcheck.go).
func (t *messageType) checked(msg proto.Message) (proto.Message, error) {
	if t.unknown >= 0 && len(*(*[]byte)(unsafe.Add(reflect.ValueOf(msg).UnsafePointer(), t.unknownOff))) == 0 {
		return msg, nil
	}
	if t.fields != nil {
		if err := t.fields.check(msg); err != nil {
			return nil, err
		}
		return msg, nil
	}
	if err := t.plan.check(msg.ProtoReflect()); err != nil {
		return nil, err
	}
	return msg, nil
}
