package netty

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sparkrpc/sparkrpc/messages"
)

// embeddedDynamic is a user's type that embeds a dynamic message: it has
// the message's methods, and its values can be of any protobuf type.
type embeddedDynamic struct{ *dynamicpb.Message }

// embeddedGenerated embeds a generated message: one Go type, but not the
// generated one.
type embeddedGenerated struct{ *wrapperspb.StringValue }

// Every message is framed under its own type's name, whatever its Go type
// says: the name is kept per Go type only for generated types.
func TestEnvelopeTypeIsTheMessages(t *testing.T) {
	var msgs []proto.Message
	for _, md := range []protoreflect.MessageDescriptor{
		(&wrapperspb.StringValue{}).ProtoReflect().Descriptor(),
		(&wrapperspb.Int64Value{}).ProtoReflect().Descriptor(),
	} {
		msgs = append(msgs, dynamicpb.NewMessage(md), embeddedDynamic{dynamicpb.NewMessage(md)})
	}
	msgs = append(msgs, embeddedGenerated{wrapperspb.String("x")}, wrapperspb.Int32(1), &messages.BenchPing{Seq: 1})
	for range 2 { // the second time from the cache
		for _, m := range msgs {
			h, err := sizeEnvelope("t", "", "", m, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if want := string(m.ProtoReflect().Descriptor().FullName()); h.typ != want {
				t.Errorf("a %s (%T) was framed as a %s", want, m, h.typ)
			}
		}
	}
	for _, c := range []struct {
		m    proto.Message
		want bool
	}{
		{&messages.BenchPing{}, true},
		{wrapperspb.String(""), true},
		{(*messages.BenchPing)(nil), true},
		{dynamicpb.NewMessage((&wrapperspb.StringValue{}).ProtoReflect().Descriptor()), false},
		{embeddedDynamic{dynamicpb.NewMessage((&wrapperspb.StringValue{}).ProtoReflect().Descriptor())}, false},
		{embeddedGenerated{wrapperspb.String("")}, false},
		{&embeddedGenerated{wrapperspb.String("")}, false},
	} {
		if got := oneDescriptorPerType(c.m); got != c.want {
			t.Errorf("oneDescriptorPerType(%T) = %v, want %v", c.m, got, c.want)
		}
	}
}
