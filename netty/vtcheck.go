// The checks that vtprotobuf's generated decoder leaves out and
// protobuf-go makes: valid UTF-8 in strings, well-formed unknown fields.

package netty

import (
	"errors"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

var (
	// errInvalidUTF8 is the error of a string field that is not valid
	// UTF-8, which protobuf-go refuses to marshal or unmarshal in proto3
	// messages.
	errInvalidUTF8 = errors.New("string field contains invalid UTF-8")
	// errBadUnknown is the error of unknown fields that are not well-formed
	// protobuf (a group whose end does not match its start, for one), which
	// vtprotobuf keeps and protobuf-go refuses.
	errBadUnknown = errors.New("malformed unknown fields")
)

// checkPlan lists the fields of one message type that the checks visit:
// its strings, and its message-typed fields (whose strings and unknown
// fields are checked in turn). A type with neither has an empty plan: only
// its own unknown fields are looked at.
type checkPlan struct {
	fields []protoreflect.FieldDescriptor
}

func (p *checkPlan) empty() bool { return len(p.fields) == 0 }

// checkPlans caches plans by message descriptor; the set of types is the
// protobuf registry's, so it stays small.
var checkPlans sync.Map // protoreflect.MessageDescriptor -> *checkPlan

// planChecks returns the plan of md.
func planChecks(md protoreflect.MessageDescriptor) *checkPlan {
	if p, ok := checkPlans.Load(md); ok {
		return p.(*checkPlan)
	}
	p := &checkPlan{}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		elem := fd
		if fd.IsMap() {
			elem = fd.MapValue()
		}
		if checksUTF8(elem) || elem.Message() != nil || (fd.IsMap() && checksUTF8(fd.MapKey())) {
			p.fields = append(p.fields, fd)
		}
	}
	v, _ := checkPlans.LoadOrStore(md, p)
	return v.(*checkPlan)
}

// checksUTF8 reports whether protobuf-go validates the UTF-8 of fd: string
// fields outside proto2 files.
func checksUTF8(fd protoreflect.FieldDescriptor) bool {
	return fd.Kind() == protoreflect.StringKind && fd.ParentFile().Syntax() != protoreflect.Proto2
}

// check returns errInvalidUTF8 or errBadUnknown when m, at any depth, holds
// a string that is not valid UTF-8 or unknown fields that do not parse.
func (p *checkPlan) check(m protoreflect.Message) error {
	if u := m.GetUnknown(); len(u) > 0 && !wellFormed(u) {
		return errBadUnknown
	}
	for _, fd := range p.fields {
		if !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		switch {
		case fd.IsMap():
			var err error
			v.Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				if err = checkValue(fd.MapKey(), k.Value()); err == nil {
					err = checkValue(fd.MapValue(), v)
				}
				return err == nil
			})
			if err != nil {
				return err
			}
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				if err := checkValue(fd, l.Get(i)); err != nil {
					return err
				}
			}
		default:
			if err := checkValue(fd, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkValue checks one value of fd (an element, for a list or a map).
func checkValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	switch {
	case checksUTF8(fd):
		if !utf8.ValidString(v.String()) {
			return errInvalidUTF8
		}
	case fd.Message() != nil:
		return planChecks(fd.Message()).check(v.Message())
	}
	return nil
}

// wellFormed reports whether b is a sequence of well-formed fields, as
// protobuf-go parses unknown fields: valid field numbers, and groups that
// end where they should, at any depth.
func wellFormed(b []byte) bool {
	n, ok := consumeFields(b, 0, protowire.DefaultRecursionLimit)
	return ok && n == len(b)
}

// consumeFields consumes fields until b ends or, inside the group group,
// until that group's end; it returns the bytes consumed. Groups nested
// deeper than depth are refused, as protobuf-go refuses them: vtprotobuf's
// decoder keeps them at any depth, and a recursion per level would let a
// frame overflow the reader's stack.
func consumeFields(b []byte, group protowire.Number, depth int) (int, bool) {
	if depth < 0 {
		return 0, false
	}
	done := 0
	for done < len(b) {
		num, typ, n := protowire.ConsumeTag(b[done:])
		if n < 0 || !num.IsValid() {
			return 0, false
		}
		done += n
		switch typ {
		case protowire.EndGroupType:
			return done, group != 0 && num == group
		case protowire.StartGroupType:
			n, ok := consumeFields(b[done:], num, depth-1)
			if !ok {
				return 0, false
			}
			done += n
		default:
			n := protowire.ConsumeFieldValue(num, typ, b[done:])
			if n < 0 {
				return 0, false
			}
			done += n
		}
	}
	return done, group == 0
}
