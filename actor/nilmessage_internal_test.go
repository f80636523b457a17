package actor

import (
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// embedsMessage is a user's type that embeds a generated message.
type embedsMessage struct{ *wrapperspb.StringValue }

// Only the types protoc-gen-go generates are told by their type alone.
func TestGeneratedType(t *testing.T) {
	dyn := dynamicpb.NewMessageType((&wrapperspb.StringValue{}).ProtoReflect().Descriptor())
	for _, c := range []struct {
		name string
		msg  proto.Message
		want bool
	}{
		{"generated", &wrapperspb.StringValue{}, true},
		{"another generated", &wrapperspb.Int64Value{}, true},
		{"dynamicpb", dyn.New().Interface(), false},
		{"struct embedding a message", embedsMessage{}, false},
		{"pointer to a struct embedding a message", &embedsMessage{}, false},
	} {
		// Twice: the second answer comes from the kept verdict.
		for range 2 {
			if got := generatedType(reflect.TypeOf(c.msg)); got != c.want {
				t.Errorf("generatedType(%s) = %v, want %v", c.name, got, c.want)
			}
		}
	}
}

// Checking a new generated message leaves it as it was: it is not asked
// for its ProtoReflect, whose first call stores the type's information in
// the message (the cost the check by type saves).
func TestNilCheckOfGeneratedMessageLeavesItUntouched(t *testing.T) {
	m := &wrapperspb.StringValue{Value: "x"}
	if isNilMessage(m) {
		t.Fatal("a message is taken for no message")
	}
	if state := reflect.ValueOf(m).Elem().Field(0); !state.IsZero() {
		t.Errorf("the check stored the message's %s", reflect.TypeOf(m).Elem().Field(0).Name)
	}
	if !isNilMessage((*wrapperspb.StringValue)(nil)) {
		t.Error("a typed nil is taken for a message")
	}
}
