package fn

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// A view reads a JSON object of the request the same way whether protobuf
// decoded it into a Struct or the codec kept it as the Struct's wire bytes
// (see Lazy decoding in docs/design.md): the readers of observed composed
// resources are written once, against views, and read only the fields they
// ask for. The zero view is an empty object.
type view struct {
	s    *structpb.Struct
	wire []byte
	lazy bool
}

// A val is one value of a view: what a *structpb.Value would hold. Its
// accessors say "", 0, false, nil or an empty view for a value of another
// kind, as structpb's getters do.
type val struct {
	v    *structpb.Value
	w    wireValue
	lazy bool
}

// structView is the view of a decoded Struct (nil: an empty object).
func structView(s *structpb.Struct) view { return view{s: s} }

// valueView is the val of a decoded Value (nil: no value).
func valueView(v *structpb.Value) val { return val{v: v} }

// resourceView is the view of a Resource's object: its Struct when protobuf
// decoded it, else the Struct bytes the codec kept in its unknown fields.
// Protobuf never leaves field 1 of a Resource among its unknown fields, so
// a decoded Resource without a Struct reads as an empty object either way.
func resourceView(r *fnv1.Resource) view {
	if s := r.GetResource(); s != nil || r == nil {
		return structView(s)
	}
	return view{wire: wireResource(r.ProtoReflect().GetUnknown()), lazy: true}
}

// get is the value of key.
func (o view) get(key string) val {
	if !o.lazy {
		return valueView(o.s.GetFields()[key])
	}
	return val{w: wireGet(o.wire, key), lazy: true}
}

// at walks a path of keys; a missing step gives no value.
func (o view) at(path ...string) val {
	var v val
	for i, k := range path {
		if i > 0 {
			o = v.object()
		}
		v = o.get(k)
	}
	return v
}

// each calls fn with every key and value of the object, in no set order; a
// key the wire bytes repeat is passed once, with its last value.
func (o view) each(fn func(key string, v val)) {
	if !o.lazy {
		for k, v := range o.s.GetFields() {
			fn(k, valueView(v))
		}
		return
	}
	seen := map[string]wireValue{}
	wireEach(o.wire, func(k []byte, v wireValue) { seen[string(k)] = v })
	for k, v := range seen {
		fn(k, val{w: v, lazy: true})
	}
}

// object is the object the value holds, or an empty view.
func (v val) object() view {
	if !v.lazy {
		return structView(v.v.GetStructValue())
	}
	if b, ok := v.w.object(); ok {
		return view{wire: b, lazy: true}
	}
	return view{}
}

// isObject reports whether the value is an object.
func (v val) isObject() bool {
	if !v.lazy {
		return v.v.GetStructValue() != nil
	}
	return v.w.kind == fieldValueStruct
}

// str is the string the value holds, or "".
func (v val) str() string {
	if !v.lazy {
		return v.v.GetStringValue()
	}
	return v.w.str()
}

// isString reports whether the value is a string.
func (v val) isString() bool {
	if !v.lazy {
		_, ok := v.v.GetKind().(*structpb.Value_StringValue)
		return ok
	}
	return v.w.kind == fieldValueString
}

// number is the number the value holds, or 0.
func (v val) number() float64 {
	if !v.lazy {
		return v.v.GetNumberValue()
	}
	return v.w.number()
}

// list are the values of a list, or nil.
func (v val) list() []val {
	if !v.lazy {
		values := v.v.GetListValue().GetValues()
		if len(values) == 0 {
			return nil
		}
		out := make([]val, len(values))
		for i, e := range values {
			out[i] = valueView(e)
		}
		return out
	}
	if v.w.kind != fieldValueList {
		return nil
	}
	var out []val
	for _, e := range v.w.values() {
		out = append(out, val{w: e, lazy: true})
	}
	return out
}

// wireResource is the Struct bytes of a Resource message's bytes, nil when
// it has none; the last one wins, as canonical form has at most one.
func wireResource(b []byte) []byte {
	var s []byte
	for len(b) > 0 {
		num, typ, v, n := next(b)
		if n < 0 {
			break
		}
		b = b[n:]
		if num == fieldResourceResource && typ == protowire.BytesType {
			s = v
		}
	}
	return s
}

// wireGet is the Value of key in a Struct's bytes; the last entry of a key
// wins, as in protobuf's map decoding.
func wireGet(s []byte, key string) wireValue {
	var out wireValue
	wireEach(s, func(k []byte, v wireValue) {
		if string(k) == key {
			out = v
		}
	})
	return out
}

// wireEach calls fn with the key and Value of every entry of a Struct's
// bytes, in order.
func wireEach(s []byte, fn func(key []byte, v wireValue)) {
	for len(s) > 0 {
		num, _, entry, n := next(s)
		if n < 0 {
			return
		}
		s = s[n:]
		if num != fieldStructFields {
			continue
		}
		key, value := entryParts(entry)
		fn(key, valueOf(value))
	}
}
