package fn

import (
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// Field numbers of RunFunctionRequest.required_resources and of its map
// entries.
const (
	fieldRequestRequiredResources protowire.Number = 8
)

// Codec is the gRPC codec for the proto content subtype that decodes a
// RunFunctionRequest lazily: its route requirements stay bytes, read field by
// field by the function; every other message, and everything else in the
// request, goes through gRPC's own proto codec. See Lazy decoding in
// docs/design.md.
type Codec struct {
	proto encoding.CodecV2
}

// NewCodec returns the lazy codec over gRPC's proto codec. Register it with
// encoding.RegisterCodecV2 before serving.
func NewCodec() *Codec {
	c := encoding.GetCodecV2(grpcproto.Name)
	if lazy, ok := c.(*Codec); ok {
		// Already registered: wrap gRPC's codec, never ourselves.
		c = lazy.proto
	}
	return &Codec{proto: c}
}

// Name is the content subtype the codec serves: proto, the one Crossplane
// sends.
func (c *Codec) Name() string { return grpcproto.Name }

// Marshal encodes as gRPC's proto codec does.
func (c *Codec) Marshal(v any) (mem.BufferSlice, error) { return c.proto.Marshal(v) }

// Unmarshal decodes a RunFunctionRequest lazily and anything else as gRPC's
// proto codec does.
func (c *Codec) Unmarshal(data mem.BufferSlice, v any) error {
	req, ok := v.(*fnv1.RunFunctionRequest)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	// A copy of our own: the route requirements keep slices of it after
	// gRPC has released its buffers.
	return DecodeRequest(data.Materialize(), req)
}

// DecodeRequest decodes a RunFunctionRequest from b as proto.Unmarshal does,
// except that each route requirement (httproutes, tlsroutes and their
// per-namespace forms) in canonical form is kept as its Resources message's
// bytes, in the Resources' unknown fields, where observeRoutes reads it. The
// request keeps slices of b, which must not change afterwards.
func DecodeRequest(b []byte, req *fnv1.RunFunctionRequest) error {
	rest, lazy, ok := splitRoutes(b)
	if !ok {
		return proto.Unmarshal(b, req)
	}
	if err := proto.Unmarshal(rest, req); err != nil {
		return err
	}
	if len(lazy) == 0 {
		return nil
	}
	if req.RequiredResources == nil {
		req.RequiredResources = make(map[string]*fnv1.Resources, len(lazy))
	}
	for key, raw := range lazy {
		rs := &fnv1.Resources{}
		rs.ProtoReflect().SetUnknown(protoreflect.RawFields(raw))
		req.RequiredResources[key] = rs
	}
	return nil
}

// splitRoutes separates the route requirements in canonical form from the
// rest of a request's bytes. It returns false, to have protobuf decode the
// whole request, when the bytes are not well-formed at the top level, a
// required resource's map entry is not in canonical form, or a route
// requirement's name appears twice (protobuf's last-one-wins would then
// depend on the order).
func splitRoutes(b []byte) ([]byte, map[string][]byte, bool) {
	var lazy map[string][]byte
	kept := map[string]bool{}
	var parts [][]byte
	size := 0
	keep := func(raw []byte) {
		parts = append(parts, raw)
		size += len(raw)
	}
	ok := eachFieldRaw(b, func(num protowire.Number, typ protowire.Type, v, raw []byte) bool {
		if num != fieldRequestRequiredResources || typ != protowire.BytesType {
			keep(raw)
			return true
		}
		key, value, canonical := mapEntry(v)
		switch {
		case !canonical:
			return false
		case !isRouteRequirement(key) || !canonicalResources(value):
			kept[key] = true
			keep(raw)
			return true
		}
		if _, dup := lazy[key]; dup {
			return false
		}
		if lazy == nil {
			lazy = map[string][]byte{}
		}
		lazy[key] = value
		return true
	})
	if !ok {
		return nil, nil, false
	}
	for key := range lazy {
		if kept[key] {
			return nil, nil, false
		}
	}
	rest := make([]byte, 0, size)
	for _, p := range parts {
		rest = append(rest, p...)
	}
	return rest, lazy, true
}

// mapEntry reads a map<string, message> entry holding its key and value once
// each, the key valid UTF-8; false otherwise.
func mapEntry(b []byte) (string, []byte, bool) {
	var key, value []byte
	var seenKey, seenValue bool
	ok := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		switch num {
		case fieldEntryKey:
			key = v
			return once(&seenKey) && typ == protowire.BytesType && utf8.Valid(v)
		case fieldEntryValue:
			value = v
			return once(&seenValue) && typ == protowire.BytesType
		}
		return true
	})
	return string(key), value, ok
}

// isRouteRequirement reports whether a requirement name is one of the route
// requirements requireRoutes makes.
func isRouteRequirement(name string) bool {
	for _, p := range []string{reqHTTPRoutes, reqTLSRoutes} {
		if rest, ok := strings.CutPrefix(name, p); ok && (rest == "" || strings.HasPrefix(rest, "/")) {
			return true
		}
	}
	return false
}

// eachFieldRaw is eachField that also passes each field's whole encoding
// (tag included).
func eachFieldRaw(b []byte, fn func(num protowire.Number, typ protowire.Type, v, raw []byte) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return false
		}
		raw := b[:n+m]
		var v []byte
		if typ == protowire.BytesType {
			v, _ = protowire.ConsumeBytes(b[n:])
		}
		if !fn(num, typ, v, raw) {
			return false
		}
		b = b[n+m:]
	}
	return true
}
