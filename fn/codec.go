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

// Field numbers of RunFunctionRequest.observed and .required_resources, and
// of State.resources.
const (
	fieldRequestObserved          protowire.Number = 2
	fieldRequestRequiredResources protowire.Number = 8
	fieldStateResources           protowire.Number = 2
)

// Codec is the gRPC codec for the proto content subtype that decodes a
// RunFunctionRequest lazily: its route requirements and observed composed
// resources stay bytes, read field by field by the function; every other
// message, and everything else in the request, goes through gRPC's own
// proto codec. See Lazy decoding in docs/design.md.
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
	// As gRPC's proto codec does: one buffer is read where it is, several
	// are copied into one from gRPC's pool. The request keeps none of it.
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return DecodeRequest(buf.ReadOnlyData(), req)
}

// DecodeRequest decodes a RunFunctionRequest from b as proto.Unmarshal does,
// except that each route requirement (httproutes, tlsroutes and their
// per-namespace forms) and each observed composed resource in canonical form
// is kept as its message's bytes (Resources, Resource), in the message's
// unknown fields, where observeRoutes and resourceView read it. Of each
// route only the fields observeRoutes reads are kept (see routeKeep). The
// request keeps no slice of b: what it keeps as bytes is copied into one
// buffer of its own.
func DecodeRequest(b []byte, req *fnv1.RunFunctionRequest) error {
	sp, ok := split(b)
	if !ok {
		return proto.Unmarshal(b, req)
	}
	// Decoding the parts one after the other is decoding their
	// concatenation: protobuf merges a message given in pieces.
	proto.Reset(req)
	for _, part := range sp.rest {
		if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(part, req); err != nil {
			return err
		}
	}
	var p pruner
	size := 0
	for _, raw := range sp.routes {
		size += p.resources(raw, routeKeep)
	}
	for _, raw := range sp.observed {
		size += len(raw)
	}
	p.write, p.b = true, make([]byte, 0, size)
	if len(sp.routes) > 0 && req.RequiredResources == nil {
		req.RequiredResources = make(map[string]*fnv1.Resources, len(sp.routes))
	}
	for key, raw := range sp.routes {
		from := len(p.b)
		p.resources(raw, routeKeep)
		rs := &fnv1.Resources{}
		rs.ProtoReflect().SetUnknown(protoreflect.RawFields(p.b[from:len(p.b):len(p.b)]))
		req.RequiredResources[key] = rs
	}
	if len(sp.observed) > 0 && req.GetObserved().GetResources() == nil {
		// The request had an observed state (split keeps its field), so
		// req.Observed is set.
		req.Observed.Resources = make(map[string]*fnv1.Resource, len(sp.observed))
	}
	for key, raw := range sp.observed {
		from := len(p.b)
		p.b = append(p.b, raw...)
		r := &fnv1.Resource{}
		r.ProtoReflect().SetUnknown(protoreflect.RawFields(p.b[from:len(p.b):len(p.b)]))
		req.Observed.Resources[key] = r
	}
	return nil
}

// A splitRequest is a request's bytes without the messages kept as bytes,
// in parts, and those messages by map key.
type splitRequest struct {
	rest     [][]byte
	routes   map[string][]byte
	observed map[string][]byte
}

// split separates the route requirements and the observed composed
// resources in canonical form from the rest of a request's bytes. It
// returns false, to have protobuf decode the whole request, when the bytes
// are not well-formed at the top level or in the observed state, a map
// entry is not in canonical form, the observed state is given twice
// (protobuf would merge the two), or a name kept as bytes appears twice
// (protobuf's last-one-wins would then depend on the order).
func split(b []byte) (splitRequest, bool) {
	var sp splitRequest
	kept := map[string]bool{}
	var parts [][]byte
	keep := func(raw []byte) { parts = append(parts, raw) }
	observedSeen := false
	ok := eachFieldRaw(b, func(num protowire.Number, typ protowire.Type, v, raw []byte) bool {
		if typ != protowire.BytesType {
			keep(raw)
			return true
		}
		switch num {
		case fieldRequestRequiredResources:
			return lazyEntry(v, raw, isRouteRequirement, canonicalResources, &sp.routes, kept, keep)
		case fieldRequestObserved:
			if !once(&observedSeen) {
				return false
			}
			state, ok := splitState(v, &sp.observed)
			if ok {
				keep(state)
			}
			return ok
		}
		keep(raw)
		return true
	})
	if !ok {
		return sp, false
	}
	for key := range sp.routes {
		if kept[key] {
			return sp, false
		}
	}
	sp.rest = parts
	return sp, true
}

// lazyEntry reads the map entry v (its whole field raw): it goes into lazy
// when its key is one lazily read and its value canonical, else to keep,
// and its key into kept. False when the entry is not canonical or its key
// is already in lazy.
func lazyEntry(v, raw []byte, isLazy func(string) bool, canonical func([]byte) bool, lazy *map[string][]byte, kept map[string]bool, keep func([]byte)) bool {
	key, value, ok := mapEntry(v)
	switch {
	case !ok:
		return false
	case !isLazy(key) || !canonical(value):
		kept[key] = true
		keep(raw)
		return true
	}
	if _, dup := (*lazy)[key]; dup {
		return false
	}
	if *lazy == nil {
		*lazy = map[string][]byte{}
	}
	(*lazy)[key] = value
	return true
}

// splitState returns the bytes of the observed state b as a request field
// without the composed resources in canonical form, which go into lazy.
func splitState(b []byte, lazy *map[string][]byte) ([]byte, bool) {
	kept := map[string]bool{}
	var rest []byte
	keep := func(raw []byte) { rest = append(rest, raw...) }
	every := func(string) bool { return true }
	canonical := func(b []byte) bool { return canonicalResource(b, 0) }
	ok := eachFieldRaw(b, func(num protowire.Number, typ protowire.Type, v, raw []byte) bool {
		if num != fieldStateResources || typ != protowire.BytesType {
			keep(raw)
			return true
		}
		return lazyEntry(v, raw, every, canonical, lazy, kept, keep)
	})
	if !ok {
		return nil, false
	}
	for key := range *lazy {
		if kept[key] {
			return nil, false
		}
	}
	field := protowire.AppendTag(nil, fieldRequestObserved, protowire.BytesType)
	return protowire.AppendBytes(field, rest), true
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
