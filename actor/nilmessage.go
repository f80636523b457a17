// What counts as no message: nil, a typed nil, or an invalid message.

package actor

import (
	"reflect"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/runtime/protoimpl"
)

// isNilMessage reports whether m is nil, a typed nil or otherwise not a
// valid message (dynamicpb's zero value, a value that embeds a nil
// message), as Ref.Send and Ref.Ask check their message.
func isNilMessage(m proto.Message) bool {
	return m == nil || !m.ProtoReflect().IsValid()
}

// isNil is isNilMessage for a message sent through r: a message of the
// type r sent last, when protoc-gen-go generated it, is valid whenever its
// pointer is not nil, and is not asked. (ProtoReflect stores the type's
// message info into every new message: an atomic store, 3 % of a stream
// of 16-byte remote sends.)
func (r *Ref) isNil(msg proto.Message) bool {
	if c := r.sentTo.Load(); c != nil && c.generated && msg != nil && reflect.TypeOf(msg) == c.typ {
		return reflect.ValueOf(msg).UnsafePointer() == nil
	}
	return isNilMessage(msg)
}

// messageState is the first field of every struct protoc-gen-go generates.
var messageState = reflect.TypeFor[protoimpl.MessageState]()

// generatedType reports whether typ is a pointer to a struct that
// protoc-gen-go generated: its first field is the message's state (a
// user's struct that embeds a message is not one).
func generatedType(typ reflect.Type) bool {
	if typ == nil || typ.Kind() != reflect.Pointer {
		return false
	}
	e := typ.Elem()
	return e.Kind() == reflect.Struct && e.NumField() > 0 && e.Field(0).Type == messageState
}
