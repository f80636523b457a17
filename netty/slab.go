// The byte slab: the bytes and strings of the small messages a
// connection's reader decodes, allocated a slab at a time.

package netty

import (
	"reflect"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A small message decoded the usual way costs two allocations: the message
// and a copy of its bytes. For a type whose messages are flat (scalars,
// strings and bytes at the top level: no lists, maps, nested messages or
// oneofs) and whose vtprotobuf code has the unsafe decoder, the reader
// instead copies the payload into a byte slab that it allocated for many
// payloads and decodes it there with UnmarshalVTUnsafe, so that the
// message's strings and bytes alias the slab, not the read buffer: one
// allocation a message, and one a slab.
//
// The endpoint still owns its message: a slab is never written again once
// a payload is copied into it and never reused, and the collector frees it
// once no message aliases it. Each bytes field is cut to its own length
// (its capacity set to it) so that an append to it copies rather than
// writes over the bytes of the next field or message. The price is what a
// retained message keeps alive: its slab, at most slabBytes.
//
// Rejected: taking the messages themselves from arrays allocated a batch
// at a time. Setting the pointer bitmap of such an array cost as much as
// the allocations it saved (docs/performance.md).
const (
	// slabBytes is the size of a byte slab.
	slabBytes = 1024
	// slabMaxPayload is the largest payload copied into a byte slab.
	slabMaxPayload = 128
)

// slabPlan says how the bytes fields of a flat type's messages are cut to
// their length: the offsets of its []byte fields in the message struct.
type slabPlan struct {
	bytes []uintptr
}

// planSlab returns the slab plan of a vtprotobuf type whose Go type is
// goType, or nil when its messages are not flat.
func planSlab(md protoreflect.MessageDescriptor, goType reflect.Type) *slabPlan {
	if goType.Kind() != reflect.Pointer || goType.Elem().Kind() != reflect.Struct {
		return nil
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsList() || fd.IsMap() || fd.Message() != nil || fd.ContainingOneof() != nil {
			return nil
		}
	}
	p := &slabPlan{}
	elem := goType.Elem()
	for i := range elem.NumField() {
		f := elem.Field(i)
		if f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Uint8 {
			p.bytes = append(p.bytes, f.Offset) // unknownFields too
		}
	}
	return p
}

// slabs is what is left of a connection reader's byte slab. Only the
// reader uses it.
type slabs struct {
	room []byte // the free part of the slab
}

// copyPayload returns a copy of payload in the byte slab, whose capacity
// is its length.
func (s *slabs) copyPayload(payload []byte) []byte {
	n := len(payload)
	if len(s.room) < n {
		s.room = make([]byte, slabBytes)
	}
	dst := s.room[:n:n]
	copy(dst, payload)
	s.room = s.room[n:]
	return dst
}

// capBytes cuts every bytes field of msg, a message of p's type, to its
// length.
func (p *slabPlan) capBytes(msg proto.Message) {
	base := reflect.ValueOf(msg).UnsafePointer()
	for _, off := range p.bytes {
		b := (*[]byte)(unsafe.Add(base, off))
		*b = (*b)[:len(*b):len(*b)]
	}
}
