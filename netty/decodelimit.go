// The decode bound: what one frame's payload may cost once decoded.

package netty

import (
	"fmt"
	"reflect"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Protobuf's wire format is dense where Go's structs are not: an empty
// sub-message in a repeated field is 2 bytes on the wire and a whole
// struct (and a slice slot) once decoded, an empty map entry 2 bytes and a
// map slot, a packed varint 1 byte and 8. A frame of repeated empty
// sub-messages decoded into ~80 times its size. So before a payload is
// decoded, its cost is estimated from the wire alone (costPlan.check, one
// pass over the payload that allocates nothing) and the payload is refused
// with a *DecodeLimitError when the estimate exceeds
//
//	decodeRatio × len(payload) + decodeSlack
//
// The estimate counts, for every field the payload holds, what decoding it
// allocates: a sub-message's struct (its Go size), a repeated element's
// slot (five times over: a long slice grows by a quarter at a time, and
// every slice it outgrew was allocated too), a map entry's slot (tripled,
// for the map's groups and growth). String and bytes contents cost their wire
// size, already in len(payload). Types with no repeated, map or recursive
// message field at any depth cannot exceed a constant and are not scanned
// (BenchPing, the handshake's messages, most of the protocol's): their
// decode costs nothing more. Sub-messages nested deeper than
// decodeDepthLimit are refused too (vtprotobuf's decoder recurses without
// a limit). The measured allocation of every shipped message type stays
// within the bound (TestDecodeCostIsBounded).

const (
	// decodeRatio bounds the estimated decoded size of a payload, per
	// byte of it.
	decodeRatio = 16
	// decodeSlack is what any payload may cost besides: a small message
	// is never refused.
	decodeSlack = 4 << 10
	// decodeDepthLimit bounds the nesting of sub-messages in a payload.
	decodeDepthLimit = 100
)

// DecodeLimitError is a payload refused before it was decoded because its
// decoded form would cost more memory than the decode bound allows, or
// nests sub-messages deeper than it allows (docs/design.md, "Decode
// bound"). The asker of a refused request fails with it.
type DecodeLimitError struct {
	Type  string // the message type
	Size  int    // the payload's size
	Cost  int64  // the estimated cost once decoded (at least), 0 for nesting, -1 for bytes it cannot parse
	Limit int64  // the bound for that size
}

func (e *DecodeLimitError) Error() string {
	if e.Cost < 0 {
		return fmt.Sprintf("netty: %s of %d bytes is malformed where the decode bound is checked", e.Type, e.Size)
	}
	if e.Cost == 0 {
		return fmt.Sprintf("netty: %s of %d bytes nests sub-messages deeper than %d", e.Type, e.Size, decodeDepthLimit)
	}
	return fmt.Sprintf("netty: decoding %s of %d bytes would allocate over %d bytes, more than the decode bound of %d bytes (%d per byte + %d)",
		e.Type, e.Size, e.Cost, e.Limit, decodeRatio, decodeSlack)
}

// decodeLimit returns the bound of a payload of n bytes.
func decodeLimit(n int) int64 { return decodeRatio*int64(n) + decodeSlack }

// Elements' sizes in Go, and what growing a slice of them costs.
const (
	sliceGrowth = 5
	ptrSize     = 8
	stringSize  = 16
	sliceSize   = 24
)

// costPlan is what decoding a message type costs, field by field.
type costPlan struct {
	size   int64 // the decoded struct
	fields map[protowire.Number]*fieldCost
}

// fieldCost is what one occurrence of a field costs.
type fieldCost struct {
	elem   int64     // a repeated element's (or map entry's) slot, 0 for a singular field
	child  *costPlan // a sub-message's (or map entry's) plan
	width  int       // a packed element's wire size (0: varint)
	scalar bool      // a repeated number: its elements may come packed
	group  bool      // a group, not a length-delimited message
}

// costPlans caches the plans by message descriptor; nil for a type whose
// decode cannot exceed a constant.
var costPlans sync.Map // protoreflect.MessageDescriptor -> *costPlan (possibly nil)

// costPlanOf returns the plan of md, or nil when its decode is bounded by
// a constant and needs no scan.
func costPlanOf(md protoreflect.MessageDescriptor, goType reflect.Type) *costPlan {
	if v, ok := costPlans.Load(md); ok {
		return v.(*costPlan)
	}
	var p *costPlan
	if amplifies(md, map[protoreflect.FullName]bool{}) {
		p = buildCostPlan(md, goType, map[protoreflect.FullName]*costPlan{})
	}
	v, _ := costPlans.LoadOrStore(md, p)
	return v.(*costPlan)
}

// amplifies reports whether md has, at any depth, a repeated or map field
// or a message field of a type that contains itself.
func amplifies(md protoreflect.MessageDescriptor, path map[protoreflect.FullName]bool) bool {
	if path[md.FullName()] {
		return true // recursive
	}
	path[md.FullName()] = true
	defer delete(path, md.FullName())
	fs := md.Fields()
	for i := range fs.Len() {
		f := fs.Get(i)
		if f.IsList() || f.IsMap() {
			return true
		}
		if m := f.Message(); m != nil && amplifies(m, path) {
			return true
		}
	}
	return false
}

// buildCostPlan makes the plan of md; built caches the plans being built,
// for recursive types.
func buildCostPlan(md protoreflect.MessageDescriptor, goType reflect.Type, built map[protoreflect.FullName]*costPlan) *costPlan {
	if p := built[md.FullName()]; p != nil {
		return p
	}
	p := &costPlan{size: structSize(md, goType) + 16, fields: make(map[protowire.Number]*fieldCost)}
	built[md.FullName()] = p
	fs := md.Fields()
	for i := range fs.Len() {
		f := fs.Get(i)
		fc := &fieldCost{group: f.Kind() == protoreflect.GroupKind}
		switch {
		case f.IsMap():
			k, v := f.MapKey(), f.MapValue()
			fc.elem = 3 * (kindSize(k) + kindSize(v) + ptrSize)
			fc.child = buildCostPlan(f.Message(), nil, built)
			fc.child.size = 0 // an entry is no struct of its own
		case f.Message() != nil:
			fc.child = buildCostPlan(f.Message(), nil, built)
			if f.IsList() {
				fc.elem = sliceGrowth * ptrSize
			}
		case f.IsList():
			fc.elem = sliceGrowth * kindSize(f)
			fc.width = packedWidth(f.Kind())
			fc.scalar = f.Kind() != protoreflect.StringKind && f.Kind() != protoreflect.BytesKind
		default:
			continue // a scalar, string or bytes field costs no more than its wire bytes
		}
		p.fields[f.Number()] = fc
	}
	return p
}

// structSize is the size of a decoded md: its generated struct's, or an
// estimate for a dynamic type.
func structSize(md protoreflect.MessageDescriptor, goType reflect.Type) int64 {
	if goType == nil {
		if mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName()); err == nil {
			goType = reflect.TypeOf(mt.Zero().Interface())
		}
	}
	if goType != nil && goType.Kind() == reflect.Pointer && goType.Elem().Kind() == reflect.Struct {
		return int64(goType.Elem().Size())
	}
	return 64 + 32*int64(md.Fields().Len())
}

// kindSize is the size in Go of one value of f's kind (a map's key or
// value, a list's element).
func kindSize(f protoreflect.FieldDescriptor) int64 {
	switch f.Kind() {
	case protoreflect.BoolKind:
		return 1
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Uint32Kind, protoreflect.EnumKind,
		protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return 4
	case protoreflect.StringKind:
		return stringSize
	case protoreflect.BytesKind:
		return sliceSize
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return ptrSize
	default:
		return 8
	}
}

// packedWidth is the wire size of a packed element of kind k; 0 for a
// varint.
func packedWidth(k protoreflect.Kind) int {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return 4
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return 8
	}
	return 0
}

// check refuses payload, a message of type typ, when decoding it would cost
// more than the decode bound.
func (p *costPlan) check(typ protoreflect.FullName, payload []byte) error {
	limit := decodeLimit(len(payload))
	cost, ok := p.cost(payload, 0, limit)
	if !ok {
		return &DecodeLimitError{Type: string(typ), Size: len(payload), Cost: cost, Limit: limit}
	}
	return nil
}

// cost estimates what decoding b, a message of p's type at depth depth,
// allocates besides its own struct. It stops once the estimate exceeds
// limit, or the nesting decodeDepthLimit (then with cost 0), or at bytes
// it cannot parse (then with cost -1), and returns false. Bytes protowire
// cannot parse are refused, not left to the decoder: vtprotobuf's takes some
// (groups nested past protowire's limit or ended by another number, tags
// whose field number overflows), and would decode what follows them
// unscanned.
func (p *costPlan) cost(b []byte, depth int, limit int64) (int64, bool) {
	if depth > decodeDepthLimit {
		return 0, false
	}
	var cost int64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return -1, false
		}
		b = b[n:]
		fc := p.fields[num]
		if fc == nil {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return -1, false
			}
			b = b[n:]
			continue
		}
		var v []byte
		switch {
		case typ == protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case typ == protowire.StartGroupType && fc.group:
			v, n = protowire.ConsumeGroup(num, b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return -1, false
		}
		b = b[n:]
		switch {
		case fc.child != nil:
			if typ != protowire.BytesType && !(typ == protowire.StartGroupType && fc.group) {
				continue // the decoder refuses it
			}
			cost += fc.elem + fc.child.size
			c, ok := fc.child.cost(v, depth+1, limit-cost)
			if !ok {
				if c <= 0 {
					return c, false
				}
				return cost + c, false
			}
			cost += c
		case typ == protowire.BytesType && fc.scalar && fc.width > 0:
			cost += fc.elem * int64(len(v)/fc.width)
		case typ == protowire.BytesType && fc.scalar:
			// Packed varints: one element per byte without the high bit.
			for _, c := range v {
				if c < 0x80 {
					cost += fc.elem
				}
			}
		default:
			cost += fc.elem
		}
		if cost > limit {
			return cost, false
		}
	}
	return cost, true
}
