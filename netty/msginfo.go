// What the codec keeps per Go message type, so that encoding and decoding a
// message need not ask it for its descriptor.

package netty

import (
	"reflect"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/runtime/protoimpl"
)

// A message's ProtoReflect, the way to its descriptor, stores the type's
// information in the message with an atomic store the first time it is
// called on it: a cost paid by every message built for one send and every
// message decoded, and 3 % of the CPU of a stream of small asks. The codec
// needs the descriptor only for what depends on the Go type alone (the
// full name, whether the type has vtprotobuf's methods, the checks after a
// vtprotobuf decode), so it keeps that per Go type.

// encodeInfo is what encoding a message of one Go type needs.
type encodeInfo struct {
	name protoreflect.FullName
	vt   bool       // the type has vtprotobuf's methods
	plan *checkPlan // what to check before a vtprotobuf encode, when vt
	// fields is plan without protobuf reflection, for a type whose
	// messages share one descriptor and whose plan allows it (see
	// fieldcheck.go).
	fields *fieldCheck
}

// encodeInfos caches encodeInfo by Go type (reflect.Type -> *keptInfo,
// whose info is nil for a type whose messages do not share one descriptor).
// The Go types of the messages a process sends are few.
var encodeInfos sync.Map

// lastEncode is the type encodeInfoOf found last, and its info: a stream of
// messages of one type finds it without hashing its type (a sixth of
// Send's time at 16 bytes). It points to the keptInfo in encodeInfos, so
// that sends of alternating types (a request and its reply) do not
// allocate.
var lastEncode atomic.Pointer[keptInfo]

// keptInfo is a Go type and its kept encodeInfo.
type keptInfo struct {
	typ  reflect.Type
	info *encodeInfo
}

// encodeInfoOf returns the encodeInfo of msg: kept per Go type for the
// types whose messages share one descriptor, worked out from msg itself
// for the others (dynamicpb's, a type that embeds a message, or another
// implementation that protoc-gen-go did not generate).
func encodeInfoOf(msg proto.Message) encodeInfo {
	typ := reflect.TypeOf(msg)
	if last := lastEncode.Load(); last != nil && last.typ == typ {
		return *last.info
	}
	v, ok := encodeInfos.Load(typ)
	if !ok {
		kept := &keptInfo{typ: typ}
		if oneDescriptorPerType(msg) {
			info := describe(msg)
			if info.vt && !info.plan.empty() {
				info.fields = planFieldCheck(typ, info.plan)
			}
			kept.info = &info
		}
		v, _ = encodeInfos.LoadOrStore(typ, kept)
	}
	if kept := v.(*keptInfo); kept.info != nil {
		lastEncode.Store(kept)
		return *kept.info
	}
	return describe(msg)
}

// describe works out the encodeInfo of msg from its descriptor.
func describe(msg proto.Message) encodeInfo {
	md := msg.ProtoReflect().Descriptor()
	info := encodeInfo{name: md.FullName()}
	if _, info.vt = msg.(vtSizer); info.vt {
		info.plan = planChecks(md)
	}
	return info
}

// oneDescriptorPerType reports whether every message of msg's Go type has
// the same descriptor: true of the types protoc-gen-go generates, which are
// their MessageInfo's Go type, and not of dynamicpb's nor of a type that
// embeds a message (which has the embedded message's methods, so every
// message of it can be of another protobuf type). It asks msg for its
// descriptor: call it once per type.
func oneDescriptorPerType(msg proto.Message) bool {
	mi, ok := msg.ProtoReflect().(interface{ ProtoMessageInfo() *protoimpl.MessageInfo })
	return ok && mi.ProtoMessageInfo().GoReflectType == reflect.TypeOf(msg)
}

// unknownFieldsIndex returns the index of the unknownFields field of a
// generated message struct type (protoimpl.UnknownFields), or -1.
func unknownFieldsIndex(typ reflect.Type) int {
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return -1
	}
	f, ok := typ.Elem().FieldByName("unknownFields")
	if !ok || len(f.Index) != 1 || f.Type.Kind() != reflect.Slice || f.Type.Elem().Kind() != reflect.Uint8 {
		return -1
	}
	return f.Index[0]
}
