package fn

import (
	"math"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// Routes read from their wire bytes (see Lazy decoding in docs/design.md).
// A route requirement is kept as the bytes of its Resources message; the
// function reads the few fields it needs straight from them instead of
// building a protobuf Struct per object, which is most of the cost of a
// request at platform scale.
//
// The reader assumes the canonical form that canonicalResources checks when
// the request is decoded; anything else is decoded by protobuf itself, so the
// function sees the same routes either way.

// Field numbers of the messages a route requirement is made of: Resources,
// Resource, google.protobuf.Struct, its map entries, Value and ListValue.
const (
	fieldResourcesItems   protowire.Number = 1
	fieldResourceResource protowire.Number = 1
	fieldResourceConnDets protowire.Number = 2
	fieldResourceReady    protowire.Number = 3
	fieldStructFields     protowire.Number = 1
	fieldEntryKey         protowire.Number = 1
	fieldEntryValue       protowire.Number = 2
	fieldValueNull        protowire.Number = 1
	fieldValueNumber      protowire.Number = 2
	fieldValueString      protowire.Number = 3
	fieldValueBool        protowire.Number = 4
	fieldValueStruct      protowire.Number = 5
	fieldValueList        protowire.Number = 6
	fieldListValues       protowire.Number = 1
)

// maxCanonicalWireDepth is how deep Structs and lists may nest in canonical
// form; deeper ones are left to protobuf, whose own limit is 10,000.
const maxCanonicalWireDepth = 64

// canonicalResources reports whether b, the bytes of a Resources message,
// decodes without error and is in the form the wire reader reads exactly:
// every singular field at most once, every Value of one kind, every known
// field in its own wire type, no connection details, no groups, valid UTF-8
// in every string, nesting under 64 levels. False means "let protobuf
// decode it", never "invalid". It runs on every byte of every route, so it
// walks the bytes with plain loops.
func canonicalResources(b []byte) bool {
	return canonicalRepeated(b, fieldResourcesItems, 0, canonicalResource)
}

func canonicalResource(b []byte, _ int) bool {
	var resource, ready bool
	for len(b) > 0 {
		num, typ, v, n := next(b)
		if n < 0 {
			return false
		}
		switch num {
		case fieldResourceResource:
			if !once(&resource) || typ != protowire.BytesType || !canonicalStruct(v, 0) {
				return false
			}
		case fieldResourceConnDets:
			return false
		case fieldResourceReady:
			if !once(&ready) || typ != protowire.VarintType {
				return false
			}
		}
		b = b[n:]
	}
	return true
}

func canonicalStruct(b []byte, depth int) bool {
	return depth <= maxCanonicalWireDepth && canonicalRepeated(b, fieldStructFields, depth, canonicalEntry)
}

func canonicalEntry(b []byte, depth int) bool {
	var key, value bool
	for len(b) > 0 {
		num, typ, v, n := next(b)
		if n < 0 {
			return false
		}
		switch num {
		case fieldEntryKey:
			if !once(&key) || typ != protowire.BytesType || !utf8.Valid(v) {
				return false
			}
		case fieldEntryValue:
			if !once(&value) || typ != protowire.BytesType || !canonicalValue(v, depth) {
				return false
			}
		}
		b = b[n:]
	}
	return true
}

func canonicalValue(b []byte, depth int) bool {
	kind := false
	for len(b) > 0 {
		num, typ, v, n := next(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		if num < fieldValueNull || num > fieldValueList {
			continue
		}
		if !once(&kind) || !canonicalKind(num, typ, v, depth) {
			return false
		}
	}
	return true
}

// canonicalKind checks one kind field of a Value.
func canonicalKind(num protowire.Number, typ protowire.Type, v []byte, depth int) bool {
	switch num {
	case fieldValueNull, fieldValueBool:
		return typ == protowire.VarintType
	case fieldValueNumber:
		return typ == protowire.Fixed64Type
	case fieldValueString:
		return typ == protowire.BytesType && utf8.Valid(v)
	case fieldValueStruct:
		return typ == protowire.BytesType && canonicalStruct(v, depth+1)
	default: // fieldValueList
		return typ == protowire.BytesType && canonicalList(v, depth+1)
	}
}

func canonicalList(b []byte, depth int) bool {
	return depth <= maxCanonicalWireDepth && canonicalRepeated(b, fieldListValues, depth, canonicalValue)
}

// canonicalRepeated checks a message whose one known field is a repeated
// message field: each element in canonical form, other fields well-formed.
func canonicalRepeated(b []byte, field protowire.Number, depth int, element func([]byte, int) bool) bool {
	for len(b) > 0 {
		num, typ, v, n := next(b)
		switch {
		case n < 0:
			return false
		case num == field && (typ != protowire.BytesType || !element(v, depth)):
			return false
		}
		b = b[n:]
	}
	return true
}

// once marks a field seen and reports whether it was not seen before.
func once(seen *bool) bool {
	if *seen {
		return false
	}
	*seen = true
	return true
}

// next reads the field at the start of b: its number, wire type, payload
// (for a length-delimited field) and length, or a negative length when the
// bytes are not a well-formed field; groups count as not well-formed
// (protobuf decides about them). One-byte tags and lengths, nearly all of a
// Kubernetes object, are read without a call.
func next(b []byte) (protowire.Number, protowire.Type, []byte, int) {
	var num protowire.Number
	var typ protowire.Type
	n := 1
	if c := b[0]; c < 0x80 && c >= 8 {
		num, typ = protowire.Number(c>>3), protowire.Type(c&7)
	} else if num, typ, n = protowire.ConsumeTag(b); n < 0 {
		return 0, 0, nil, -1
	}
	switch typ {
	case protowire.BytesType:
		if len(b) > n && b[n] < 0x80 {
			l := int(b[n])
			if len(b)-n-1 < l {
				return 0, 0, nil, -1
			}
			return num, typ, b[n+1 : n+1+l], n + 1 + l
		}
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return 0, 0, nil, -1
		}
		return num, typ, v, n + m
	case protowire.VarintType, protowire.Fixed32Type, protowire.Fixed64Type:
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return 0, 0, nil, -1
		}
		return num, typ, nil, n + m
	default:
		return 0, 0, nil, -1
	}
}

// eachField calls fn with every field of a message: its number, wire type
// and, for a length-delimited field, its payload. It stops and returns false
// when fn does or when the bytes are not a sequence of well-formed fields.
func eachField(b []byte, fn func(protowire.Number, protowire.Type, []byte) bool) bool {
	for len(b) > 0 {
		num, typ, v, n := next(b)
		if n < 0 || !fn(num, typ, v) {
			return false
		}
		b = b[n:]
	}
	return true
}

// The reader. Every function below reads bytes canonicalResources accepted.

// wireItems returns the resource (Struct bytes, nil when absent) of every
// item of a Resources message's bytes.
func wireItems(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		num, typ, item, n := next(b)
		if n < 0 {
			break
		}
		b = b[n:]
		if num != fieldResourcesItems || typ != protowire.BytesType {
			continue
		}
		s := wireResource(item)
		out = append(out, s)
	}
	return out
}

// wireValue is one Value: the field number of its kind (0 when it has none)
// and, for a string, struct or list, its payload.
type wireValue struct {
	kind    protowire.Number
	payload []byte
}

// lookup fills out[i] with the Value of key keys[i] in a Struct's bytes; the
// last entry of a key wins, as in protobuf's map decoding.
func lookup(s []byte, keys []string, out []wireValue) {
	for i := range out {
		out[i] = wireValue{}
	}
	wireEach(s, func(key []byte, v wireValue) {
		for i, k := range keys {
			if i < len(out) && string(key) == k {
				out[i] = v
			}
		}
	})
}

// valueOf reads a Value's bytes. A number's payload is its 8 bytes, a
// bool's (or null's) its varint.
func valueOf(b []byte) wireValue {
	var v wireValue
	for len(b) > 0 {
		num, typ, p, n := next(b)
		if n < 0 {
			break
		}
		switch typ {
		case protowire.Fixed64Type:
			p = b[n-8 : n]
		case protowire.VarintType:
			_, _, t := protowire.ConsumeTag(b)
			p = b[t:n]
		}
		b = b[n:]
		if num >= fieldValueNull && num <= fieldValueList {
			v = wireValue{kind: num, payload: p}
		}
	}
	return v
}

// number is the number a Value holds, or 0.
func (v wireValue) number() float64 {
	if v.kind != fieldValueNumber {
		return 0
	}
	bits, n := protowire.ConsumeFixed64(v.payload)
	if n < 0 {
		return 0
	}
	return math.Float64frombits(bits)
}

// str is the string a Value holds, or "".
func (v wireValue) str() string {
	if v.kind != fieldValueString {
		return ""
	}
	return string(v.payload)
}

// object is the Struct bytes a Value holds, and whether it holds one.
func (v wireValue) object() ([]byte, bool) {
	return v.payload, v.kind == fieldValueStruct
}

// values are the Values of a list Value.
func (v wireValue) values() []wireValue {
	var out []wireValue
	b := v.payload
	for len(b) > 0 {
		num, _, p, n := next(b)
		if n < 0 {
			break
		}
		b = b[n:]
		if num == fieldListValues {
			out = append(out, valueOf(p))
		}
	}
	return out
}
