package fn

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// Routes kept as less than their bytes. The request arrives in gRPC's
// buffers, which are released once it is decoded; what the function keeps
// of it must be its own. Of each route it reads a handful of fields
// (decodeWireRoute), so the codec copies only the Struct entries under those
// keys, in their order, duplicates included: every lookup of the reader then
// finds what it would have found in the whole route. The rest of each route
// (rules, status, most of metadata) is never copied.

// A keepTree names the entries of a Struct to keep: under each key, nil
// keeps the value whole, a tree keeps only those entries of an object (a
// value of any other kind is kept whole).
type keepTree map[string]keepTree

// routeKeep is what decodeWireRoute reads of a route.
var routeKeep = keepTree{
	keyMetadata: {"name": nil, "namespace": nil, "labels": {gateway.LabelHTTP01Solver: nil}},
	keySpec:     {"parentRefs": nil, "hostnames": nil},
}

// A pruner writes the kept parts of Structs in canonical form. Measure
// first (write false), then write into a buffer of that size, so that the
// copy takes one allocation of its size.
type pruner struct {
	write bool
	b     []byte
}

// resources handles the bytes of a Resources message of routes: each
// item's Resource becomes one holding only its kept Struct. It returns the
// size of what it writes.
func (p *pruner) resources(b []byte, k keepTree) int {
	n := 0
	for len(b) > 0 {
		num, typ, item, l := next(b)
		if l < 0 {
			break
		}
		b = b[l:]
		if num != fieldResourcesItems || typ != protowire.BytesType {
			continue
		}
		itemStart := p.open(fieldResourcesItems)
		size := 0
		if s := wireResource(item); s != nil {
			resourceStart := p.open(fieldResourceResource)
			size = p.close(fieldResourceResource, resourceStart, p.structFields(s, k))
		}
		n += p.close(fieldResourcesItems, itemStart, size)
	}
	return n
}

// open starts a length-delimited field num, its length to come.
func (p *pruner) open(num protowire.Number) int {
	if p.write {
		p.b = append(protowire.AppendTag(p.b, num, protowire.BytesType), 0)
	}
	return len(p.b)
}

// close ends the field num opened at start, whose content is size bytes,
// and returns the field's size.
func (p *pruner) close(num protowire.Number, start, size int) int {
	if p.write {
		p.b = fixLength(p.b, start)
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(size)
}

// structFields handles the entries of a Struct's bytes s that k keeps, and
// returns their size.
func (p *pruner) structFields(s []byte, k keepTree) int {
	n := 0
	for len(s) > 0 {
		num, typ, entry, l := next(s)
		if l < 0 {
			break
		}
		raw := s[:l]
		s = s[l:]
		if num != fieldStructFields || typ != protowire.BytesType {
			continue
		}
		key, value := entryParts(entry)
		sub, ok := k[string(key)]
		if !ok {
			continue
		}
		obj, isObject := valueOf(value).object()
		if sub == nil || !isObject {
			n += p.raw(raw)
			continue
		}
		entryStart := p.open(fieldStructFields)
		size := p.key(key)
		valueStart := p.open(fieldEntryValue)
		structStart := p.open(fieldValueStruct)
		inner := p.close(fieldValueStruct, structStart, p.structFields(obj, sub))
		size += p.close(fieldEntryValue, valueStart, inner)
		n += p.close(fieldStructFields, entryStart, size)
	}
	return n
}

// key handles the key field of a Struct entry.
func (p *pruner) key(key []byte) int {
	if p.write {
		p.b = protowire.AppendBytes(protowire.AppendTag(p.b, fieldEntryKey, protowire.BytesType), key)
	}
	return protowire.SizeTag(fieldEntryKey) + protowire.SizeBytes(len(key))
}

// raw handles bytes kept as they are.
func (p *pruner) raw(b []byte) int {
	if p.write {
		p.b = append(p.b, b...)
	}
	return len(b)
}

// entryParts are the key and Value bytes of a Struct entry; the last of
// each wins, as canonical form has one of each.
func entryParts(entry []byte) ([]byte, []byte) {
	var key, value []byte
	for len(entry) > 0 {
		num, _, v, n := next(entry)
		if n < 0 {
			break
		}
		entry = entry[n:]
		switch num {
		case fieldEntryKey:
			key = v
		case fieldEntryValue:
			value = v
		}
	}
	return key, value
}
