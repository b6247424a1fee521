package fn

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// Desired resources written as wire bytes. A desired composed resource or XR
// is unstructured content (map[string]any); the SDK turns each into a
// structpb.Struct, which proto.Marshal then walks again. The encoder below
// writes the content straight into the bytes proto.Marshal would make of
// structpb.NewStruct's Struct (map entries in key order, as deterministic
// marshalling writes them) and keeps them in the Resource message's unknown
// fields, which proto.Marshal copies as they are. Readers in this process
// see a Resource without a Struct; DecodeDesired gives them one.

// A structEncoder appends Struct wire bytes. keys is a stack of the keys of
// the maps being written, so that sorting them allocates once per call, not
// once per map.
type structEncoder struct {
	keys []string
}

// desiredResource returns a Resource holding the Struct of content as wire
// bytes, ready as given. It fails where structpb.NewStruct would. The bytes
// are measured first, so that they take one allocation of their size.
func (e *structEncoder) desiredResource(content map[string]any, ready fnv1.Ready) (*fnv1.Resource, error) {
	n := sizeStruct(content)
	b := make([]byte, 0, protowire.SizeTag(fieldResourceResource)+protowire.SizeBytes(n))
	b = append(protowire.AppendTag(b, fieldResourceResource, protowire.BytesType), 0)
	b, err := e.appendStruct(b, content)
	if err != nil {
		return nil, err
	}
	b = fixLength(b, len(b)-n)
	r := &fnv1.Resource{Ready: ready}
	r.ProtoReflect().SetUnknown(protoreflect.RawFields(b))
	return r, nil
}

// sizeStruct is the size of the Struct appendStruct writes of m; a value
// it cannot write counts as nothing (appendStruct then fails).
func sizeStruct(m map[string]any) int {
	n := 0
	for k, v := range m {
		entry := protowire.SizeTag(fieldEntryKey) + protowire.SizeBytes(len(k)) + protowire.SizeTag(fieldEntryValue) + protowire.SizeBytes(sizeValue(v))
		n += protowire.SizeTag(fieldStructFields) + protowire.SizeBytes(entry)
	}
	return n
}

// sizeValue is the size of the Value appendValue writes of v.
func sizeValue(v any) int {
	switch v := v.(type) {
	case encodedValue:
		return len(v)
	case nil:
		return protowire.SizeTag(fieldValueNull) + protowire.SizeVarint(0)
	case bool:
		return protowire.SizeTag(fieldValueBool) + protowire.SizeVarint(protowire.EncodeBool(v))
	case string:
		return protowire.SizeTag(fieldValueString) + protowire.SizeBytes(len(v))
	case map[string]any:
		return protowire.SizeTag(fieldValueStruct) + protowire.SizeBytes(sizeStruct(v))
	case []any:
		n := 0
		for _, e := range v {
			n += protowire.SizeTag(fieldListValues) + protowire.SizeBytes(sizeValue(e))
		}
		return protowire.SizeTag(fieldValueList) + protowire.SizeBytes(n)
	case []byte:
		return protowire.SizeTag(fieldValueString) + protowire.SizeBytes(base64.StdEncoding.EncodedLen(len(v)))
	case json.Number:
		return protowire.SizeTag(fieldValueNumber) + protowire.SizeFixed64()
	}
	if _, ok := number(v); ok {
		return protowire.SizeTag(fieldValueNumber) + protowire.SizeFixed64()
	}
	return 0
}

// fixLength writes the length of b[start:] into the byte reserved before
// it, moving the bytes up when the length takes more than that byte.
func fixLength(b []byte, start int) []byte {
	content := b[start:]
	n := len(content)
	if extra := protowire.SizeBytes(n) - n - 1; extra > 0 {
		b = append(b, make([]byte, extra)...)
		copy(b[start+extra:], content)
	}
	protowire.AppendVarint(b[:start-1], uint64(len(content)))
	return b
}

// appendStruct appends the fields of the Struct of m (without a tag or a
// length of its own).
func (e *structEncoder) appendStruct(b []byte, m map[string]any) ([]byte, error) {
	base := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	// A slice of its own: writing the values may grow e.keys elsewhere.
	keys := e.keys[base:len(e.keys):len(e.keys)]
	slices.Sort(keys)
	var err error
	for _, k := range keys {
		if !utf8.ValidString(k) {
			return nil, fmt.Errorf("invalid UTF-8 in string: %q", k)
		}
		b = protowire.AppendTag(b, fieldStructFields, protowire.BytesType)
		b = append(b, 0)
		entry := len(b)
		b = protowire.AppendTag(b, fieldEntryKey, protowire.BytesType)
		b = protowire.AppendString(b, k)
		b = protowire.AppendTag(b, fieldEntryValue, protowire.BytesType)
		b = append(b, 0)
		value := len(b)
		if b, err = e.appendValue(b, m[k]); err != nil {
			return nil, err
		}
		b = fixLength(b, value)
		b = fixLength(b, entry)
	}
	clear(e.keys[base:])
	e.keys = e.keys[:base]
	return b, nil
}

// appendValue appends the fields of the Value structpb.NewValue makes of v.
func (e *structEncoder) appendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case encodedValue:
		return append(b, v...), nil
	case nil:
		return protowire.AppendVarint(protowire.AppendTag(b, fieldValueNull, protowire.VarintType), 0), nil
	case bool:
		return protowire.AppendVarint(protowire.AppendTag(b, fieldValueBool, protowire.VarintType), protowire.EncodeBool(v)), nil
	case string:
		if !utf8.ValidString(v) {
			return nil, fmt.Errorf("invalid UTF-8 in string: %q", v)
		}
		return protowire.AppendString(protowire.AppendTag(b, fieldValueString, protowire.BytesType), v), nil
	case map[string]any:
		b = append(protowire.AppendTag(b, fieldValueStruct, protowire.BytesType), 0)
		start := len(b)
		b, err := e.appendStruct(b, v)
		if err != nil {
			return nil, err
		}
		return fixLength(b, start), nil
	case []any:
		b = append(protowire.AppendTag(b, fieldValueList, protowire.BytesType), 0)
		start := len(b)
		b, err := e.appendList(b, v)
		if err != nil {
			return nil, err
		}
		return fixLength(b, start), nil
	}
	return appendScalar(b, v)
}

// appendScalar appends the Value of bytes (a base64 string, as
// structpb.NewValue writes them) or of a number.
func appendScalar(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case []byte:
		s := base64.StdEncoding.EncodeToString(v)
		return protowire.AppendString(protowire.AppendTag(b, fieldValueString, protowire.BytesType), s), nil
	case json.Number:
		n, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("invalid number format %q, expected a float64: %w", v, err)
		}
		return appendNumber(b, n), nil
	}
	n, ok := number(v)
	if !ok {
		return nil, fmt.Errorf("invalid type: %T", v)
	}
	return appendNumber(b, n), nil
}

// appendList appends the fields of the ListValue of l.
func (e *structEncoder) appendList(b []byte, l []any) ([]byte, error) {
	var err error
	for _, v := range l {
		b = protowire.AppendTag(b, fieldListValues, protowire.BytesType)
		b = append(b, 0)
		start := len(b)
		if b, err = e.appendValue(b, v); err != nil {
			return nil, err
		}
		b = fixLength(b, start)
	}
	return b, nil
}

func appendNumber(b []byte, n float64) []byte {
	return protowire.AppendFixed64(protowire.AppendTag(b, fieldValueNumber, protowire.Fixed64Type), math.Float64bits(n))
}

// number is a Go number as the float64 structpb.NewValue makes of it.
func number(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	case int32:
		return float64(v), true
	case float32:
		return float64(v), true
	case int8:
		return float64(v), true
	case int16:
		return float64(v), true
	}
	return unsigned(v)
}

// unsigned is number for the unsigned integers.
func unsigned(v any) (float64, bool) {
	switch v := v.(type) {
	case uint:
		return float64(v), true
	case uint8:
		return float64(v), true
	case uint16:
		return float64(v), true
	case uint32:
		return float64(v), true
	case uint64:
		return float64(v), true
	}
	return 0, false
}

// An encodedValue is a Value's fields already written as wire bytes, put in
// unstructured content where the encoder would otherwise walk thousands of
// maps the unstructured converter made of a typed list.
type encodedValue []byte

// hostnamesValue is the Value structpb.NewValue makes of the unstructured
// form of status.hostnames: a list of Structs of hostname, message (left out
// when empty, as omitempty does), route and state, in key order. It fails
// where structpb.NewValue would, on a string that is not valid UTF-8. Every
// length is known before it is written, so the bytes take one allocation of
// their size.
func hostnamesValue(hs []v1alpha1.HostnameStatus) (encodedValue, error) {
	list := 0
	for i := range hs {
		list += sizeNested(fieldListValues, sizeNested(fieldValueStruct, sizeHostname(&hs[i])))
	}
	b := make([]byte, 0, sizeNested(fieldValueList, list))
	b = appendNested(b, fieldValueList, list)
	for i := range hs {
		h := &hs[i]
		fields := sizeHostname(h)
		b = appendNested(b, fieldListValues, sizeNested(fieldValueStruct, fields))
		b = appendNested(b, fieldValueStruct, fields)
		for _, f := range hostnameFields(h) {
			if omitted(f) {
				continue
			}
			if !utf8.ValidString(f[1]) {
				return nil, fmt.Errorf("invalid UTF-8 in string: %q", f[1])
			}
			b = appendStringEntry(b, f[0], f[1])
		}
	}
	return b, nil
}

// hostnameFields are the keys and values of a hostname's Struct, in key
// order.
func hostnameFields(h *v1alpha1.HostnameStatus) [4][2]string {
	return [4][2]string{{"hostname", h.Hostname}, {"message", h.Message}, {"route", h.Route}, {"state", string(h.State)}}
}

// omitted says whether a hostname's field is left out of its Struct: an
// empty message, as the type's omitempty leaves it out.
func omitted(f [2]string) bool { return f[0] == "message" && f[1] == "" }

// sizeHostname is the size of a hostname's Struct fields.
func sizeHostname(h *v1alpha1.HostnameStatus) int {
	n := 0
	for _, f := range hostnameFields(h) {
		if omitted(f) {
			continue
		}
		n += sizeNested(fieldStructFields, sizeStringEntry(f[0], f[1]))
	}
	return n
}

// sizeStringEntry is the size of the fields of a Struct's entry of a string
// value.
func sizeStringEntry(key, value string) int {
	return protowire.SizeTag(fieldEntryKey) + protowire.SizeBytes(len(key)) +
		sizeNested(fieldEntryValue, protowire.SizeTag(fieldValueString)+protowire.SizeBytes(len(value)))
}

// sizeNested is the size of a length-delimited field num of size bytes.
func sizeNested(num protowire.Number, size int) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(size)
}

// appendNested appends the tag and length of a length-delimited field num
// whose size bytes follow.
func appendNested(b []byte, num protowire.Number, size int) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.BytesType), uint64(size)) //nolint:gosec // a size, never negative
}

// appendStringEntry appends a Struct's entry of a string value.
func appendStringEntry(b []byte, key, value string) []byte {
	b = appendNested(b, fieldStructFields, sizeStringEntry(key, value))
	b = protowire.AppendString(protowire.AppendTag(b, fieldEntryKey, protowire.BytesType), key)
	b = appendNested(b, fieldEntryValue, protowire.SizeTag(fieldValueString)+protowire.SizeBytes(len(value)))
	return protowire.AppendString(protowire.AppendTag(b, fieldValueString, protowire.BytesType), value)
}

// DecodeDesired gives each desired resource of rsp (the XR and the composed
// resources) whose Struct the function kept as wire bytes that Struct, as a
// client decoding the response would see it: for readers in this process,
// tests and fakes.
func DecodeDesired(rsp *fnv1.RunFunctionResponse) error {
	d := rsp.GetDesired()
	if err := decodeKept(d.GetComposite()); err != nil {
		return fmt.Errorf("cannot decode the desired composite resource: %w", err)
	}
	for name, r := range d.GetResources() {
		if err := decodeKept(r); err != nil {
			return fmt.Errorf("cannot decode desired composed resource %q: %w", name, err)
		}
	}
	return nil
}

// decodeKept merges the unknown fields of r into it.
func decodeKept(r *fnv1.Resource) error {
	if r == nil {
		return nil
	}
	u := r.ProtoReflect().GetUnknown()
	if len(u) == 0 {
		return nil
	}
	r.ProtoReflect().SetUnknown(nil)
	return proto.UnmarshalOptions{Merge: true}.Unmarshal(u, r)
}
