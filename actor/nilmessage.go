// What counts as no message: nil, a typed nil, or an invalid message.

package actor

import (
	"reflect"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// generatedMessage is the marker method protoc-gen-go gives every message
// type it generates.
type generatedMessage interface{ ProtoMessage() }

// isNilMessage reports whether m is nil, a typed nil or otherwise not a
// valid message, as Ref.Send and Ref.Ask check their message.
//
// A generated message is valid exactly when its pointer is not nil, and
// that is checked without calling ProtoReflect: the first ProtoReflect on a
// new message stores its type information in it with an atomic store, a
// cost a message built for one send would pay here only to be asked
// whether it is nil. Other implementations (dynamicpb's, whose invalid
// messages are not nil pointers) are asked.
func isNilMessage(m proto.Message) bool {
	if m == nil {
		return true
	}
	if _, generated := m.(generatedMessage); generated {
		if _, dynamic := m.(*dynamicpb.Message); !dynamic {
			v := reflect.ValueOf(m)
			return v.Kind() == reflect.Pointer && v.IsNil()
		}
	}
	return !m.ProtoReflect().IsValid()
}
