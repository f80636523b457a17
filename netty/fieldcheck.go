// The checks of a checkPlan without protobuf reflection, for the generated
// types whose checked fields are all plain strings.

package netty

import (
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Asking a message for its fields through protobuf reflection (Has, Get,
// and ProtoReflect's store of the type's information in the message) costs
// more than the UTF-8 check itself: about 100 ns a message, paid on every
// encode and every decode of a type with a string field (the scheduler's
// LaunchTask and StatusUpdate among them). Most such types hold their
// strings as plain fields of the generated struct, which a reflect.Value
// reads directly.

// fieldCheck is the checkPlan of one generated Go message type whose
// checked fields are all singular proto3 strings (no presence, no oneof, no
// list, no nested message) or maps from strings to a scalar that is not a
// string (only the keys are checked): the indexes in its struct of those
// fields and of its unknown fields.
type fieldCheck struct {
	strings []int
	maps    []int // map[string]T fields, T not a string
	unknown int
}

// planFieldCheck returns the fieldCheck of the generated message type typ
// (a pointer to its struct), whose checkPlan is plan, or nil when one of
// plan's fields is not a plain string field of the struct.
func planFieldCheck(typ reflect.Type, plan *checkPlan) *fieldCheck {
	unknown := unknownFieldsIndex(typ)
	if unknown < 0 {
		return nil
	}
	c := &fieldCheck{unknown: unknown}
	for _, fd := range plan.fields {
		if fd.IsMap() {
			if !stringKeyedScalarMap(fd) {
				return nil
			}
			i := fieldIndex(typ.Elem(), fd.Number(), reflect.Map)
			if i < 0 || typ.Elem().Field(i).Type.Key().Kind() != reflect.String {
				return nil
			}
			c.maps = append(c.maps, i)
			continue
		}
		if fd.IsList() || fd.Kind() != protoreflect.StringKind || fd.HasPresence() {
			return nil
		}
		i := fieldIndex(typ.Elem(), fd.Number(), reflect.String)
		if i < 0 {
			return nil
		}
		c.strings = append(c.strings, i)
	}
	return c
}

// stringKeyedScalarMap reports whether fd is a map from strings to a value
// that needs no check: neither a string nor a message.
func stringKeyedScalarMap(fd protoreflect.FieldDescriptor) bool {
	v := fd.MapValue().Kind()
	return fd.MapKey().Kind() == protoreflect.StringKind && v != protoreflect.StringKind &&
		v != protoreflect.MessageKind && v != protoreflect.GroupKind
}

// fieldIndex returns the index of the field of kind kind of the generated
// struct st whose protobuf tag ("bytes,NUMBER,opt,...") has the field
// number num, or -1.
func fieldIndex(st reflect.Type, num protoreflect.FieldNumber, kind reflect.Kind) int {
	for i := range st.NumField() {
		f := st.Field(i)
		parts := strings.SplitN(f.Tag.Get("protobuf"), ",", 3)
		if len(parts) < 2 || f.Type.Kind() != kind {
			continue
		}
		if n, err := strconv.Atoi(parts[1]); err == nil && protoreflect.FieldNumber(n) == num {
			return i
		}
	}
	return -1
}

// check returns errBadUnknown or errInvalidUTF8 as checkPlan.check does for
// msg, a message of the type c was planned for.
func (c *fieldCheck) check(msg proto.Message) error {
	p := reflect.ValueOf(msg)
	if p.IsNil() {
		return nil
	}
	v := p.Elem()
	if u := v.Field(c.unknown).Bytes(); len(u) > 0 && !wellFormed(u) {
		return errBadUnknown
	}
	for _, i := range c.strings {
		if !utf8.ValidString(v.Field(i).String()) {
			return errInvalidUTF8
		}
	}
	for _, i := range c.maps {
		m := v.Field(i)
		if m.Len() == 0 {
			continue
		}
		for it := m.MapRange(); it.Next(); {
			if !utf8.ValidString(it.Key().String()) {
				return errInvalidUTF8
			}
		}
	}
	return nil
}
