// What counts as no message: nil, a typed nil, or an invalid message.

package actor

import (
	"reflect"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/runtime/protoimpl"
)

// isNilMessage reports whether m is nil, a typed nil or otherwise not a
// valid message (dynamicpb's zero value, a value that embeds a nil
// message), as Ref.Send and Ref.Ask check their message.
//
// A message of a type that protoc-gen-go generated is valid exactly when
// its pointer is not nil, and its type says so without asking the message:
// ProtoReflect, the general check, stores the type's information in a new
// message with an atomic write the first time it is called on it, which
// was a sixth of the CPU of Ref.Send of a new 16-byte message to a remote
// endpoint (docs/performance.md, "Before and after: the nil check").
func isNilMessage(m proto.Message) bool {
	if m == nil {
		return true
	}
	if generatedType(reflect.TypeOf(m)) {
		return reflect.ValueOf(m).IsNil()
	}
	return !m.ProtoReflect().IsValid()
}

// A typeVerdict is whether one Go type is a generated message type.
type typeVerdict struct {
	typ       reflect.Type
	generated bool
}

var (
	// lastVerdict is the verdict on the type asked about last: a process
	// sends few types, most often one after another of the same.
	lastVerdict atomic.Pointer[typeVerdict]
	// verdicts keeps every type's verdict (reflect.Type -> *typeVerdict).
	verdicts sync.Map
)

// generatedType reports whether t is a message type that protoc-gen-go
// generated: its messages are pointers to its struct, and its message
// information names it as the Go type. Not dynamicpb's, nor a type that
// embeds a message (whose messages can be nil inside).
func generatedType(t reflect.Type) bool {
	if v := lastVerdict.Load(); v != nil && v.typ == t {
		return v.generated
	}
	var v *typeVerdict
	if kept, ok := verdicts.Load(t); ok {
		v = kept.(*typeVerdict)
	} else {
		v = &typeVerdict{typ: t, generated: isGeneratedType(t)}
		kept, _ := verdicts.LoadOrStore(t, v)
		v = kept.(*typeVerdict)
	}
	lastVerdict.Store(v)
	return v.generated
}

// isGeneratedType works out generatedType's answer from a new message of t.
func isGeneratedType(t reflect.Type) bool {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return false
	}
	m, ok := reflect.New(t.Elem()).Interface().(proto.Message)
	if !ok {
		return false
	}
	mi, ok := m.ProtoReflect().(interface{ ProtoMessageInfo() *protoimpl.MessageInfo })
	return ok && mi.ProtoMessageInfo().GoReflectType == t
}
