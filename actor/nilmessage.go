// What counts as no message: nil, a typed nil, or an invalid message.

package actor

import (
	"reflect"
	"sync/atomic"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/runtime/protoimpl"
)

// isNilMessage reports whether m is nil, a typed nil or otherwise not a
// valid message (dynamicpb's zero value, a value that embeds a nil
// message), as Ref.Send and Ref.Ask check their message.
//
// A message of a type that protoc-gen-go generated is valid whenever its
// pointer is not nil, and is not asked: ProtoReflect stores the type's
// message info into every new message, an atomic store that was a tenth
// of the sender's own time in a stream of 16-byte remote sends.
func isNilMessage(m proto.Message) bool {
	if m == nil {
		return true
	}
	if v := reflect.ValueOf(m); v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return true
		}
		if isGenerated(v.Type()) {
			return false
		}
	}
	return !m.ProtoReflect().IsValid()
}

// lastGenerated is the generated message type isGenerated found last.
var lastGenerated atomic.Pointer[reflect.Type]

// messageState is the first field of every generated message struct.
var messageState = reflect.TypeFor[protoimpl.MessageState]()

// isGenerated reports whether typ is a pointer to a struct that
// protoc-gen-go generated (its first field is the message's state; a
// user's struct that embeds a message is not).
func isGenerated(typ reflect.Type) bool {
	if last := lastGenerated.Load(); last != nil && *last == typ {
		return true
	}
	e := typ.Elem()
	if e.Kind() != reflect.Struct || e.NumField() == 0 || e.Field(0).Type != messageState {
		return false
	}
	lastGenerated.Store(&typ)
	return true
}
