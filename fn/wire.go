package fn

import (
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
// decode it", never "invalid".
func canonicalResources(b []byte) bool {
	return eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		if num != fieldResourcesItems {
			return true
		}
		return typ == protowire.BytesType && canonicalResource(v)
	})
}

func canonicalResource(b []byte) bool {
	var seen [4]bool
	return eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		switch num {
		case fieldResourceResource:
			return once(&seen[num]) && typ == protowire.BytesType && canonicalStruct(v, 0)
		case fieldResourceConnDets:
			return false
		case fieldResourceReady:
			return once(&seen[num]) && typ == protowire.VarintType
		}
		return true
	})
}

func canonicalStruct(b []byte, depth int) bool {
	if depth > maxCanonicalWireDepth {
		return false
	}
	return eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		if num != fieldStructFields {
			return true
		}
		return typ == protowire.BytesType && canonicalEntry(v, depth)
	})
}

func canonicalEntry(b []byte, depth int) bool {
	var seen [3]bool
	return eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		switch num {
		case fieldEntryKey:
			return once(&seen[num]) && typ == protowire.BytesType && utf8.Valid(v)
		case fieldEntryValue:
			return once(&seen[num]) && typ == protowire.BytesType && canonicalValue(v, depth)
		}
		return true
	})
}

func canonicalValue(b []byte, depth int) bool {
	kinds := false
	return eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		if num < fieldValueNull || num > fieldValueList {
			return true
		}
		if !once(&kinds) {
			return false
		}
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
	})
}

func canonicalList(b []byte, depth int) bool {
	if depth > maxCanonicalWireDepth {
		return false
	}
	return eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		if num != fieldListValues {
			return true
		}
		return typ == protowire.BytesType && canonicalValue(v, depth)
	})
}

// once marks a field seen and reports whether it was not seen before.
func once(seen *bool) bool {
	if *seen {
		return false
	}
	*seen = true
	return true
}

// eachField calls fn with every field of a message: its number, wire type
// and, for a length-delimited field, its payload. It stops and returns false
// when fn does or when the bytes are not a sequence of well-formed fields;
// groups count as not well-formed (protobuf decides about them).
func eachField(b []byte, fn func(protowire.Number, protowire.Type, []byte) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		var v []byte
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType, protowire.Fixed32Type, protowire.Fixed64Type:
			n = protowire.ConsumeFieldValue(num, typ, b)
		default:
			return false
		}
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
	eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		if num == fieldResourcesItems && typ == protowire.BytesType {
			var s []byte
			eachField(v, func(num protowire.Number, typ protowire.Type, v []byte) bool {
				if num == fieldResourceResource && typ == protowire.BytesType {
					s = v
				}
				return true
			})
			out = append(out, s)
		}
		return true
	})
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
	eachField(s, func(num protowire.Number, _ protowire.Type, entry []byte) bool {
		if num != fieldStructFields {
			return true
		}
		var key, val []byte
		eachField(entry, func(num protowire.Number, _ protowire.Type, v []byte) bool {
			switch num {
			case fieldEntryKey:
				key = v
			case fieldEntryValue:
				val = v
			}
			return true
		})
		for i, k := range keys {
			if string(key) == k {
				out[i] = valueOf(val)
			}
		}
		return true
	})
}

// valueOf reads a Value's bytes.
func valueOf(b []byte) wireValue {
	var v wireValue
	eachField(b, func(num protowire.Number, _ protowire.Type, p []byte) bool {
		if num >= fieldValueNull && num <= fieldValueList {
			v = wireValue{kind: num, payload: p}
		}
		return true
	})
	return v
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
	eachField(v.payload, func(num protowire.Number, _ protowire.Type, p []byte) bool {
		if num == fieldListValues {
			out = append(out, valueOf(p))
		}
		return true
	})
	return out
}
