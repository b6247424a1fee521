// Package jsonobj converts between JSON-shaped values and Go types, the one
// way the function does it everywhere: the edge decoding an XR or the
// input, the Tenant computation decoding platform settings, and both
// computations encoding the manifests of provider-kubernetes Objects.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Decode reads a JSON-shaped value (an unstructured object, a list, a
// string) into a Go type. It goes through encoding/json rather than the
// unstructured converter or the SDK's decoder because encoding/json's errors
// name the offending field ("… Go struct field TenantGatewaySpec.spec.apex
// of type string"), which is what an operator needs to fix the object.
func Decode(v any, into any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// DecodeStrict is Decode refusing fields the Go type does not have, for
// settings that no schema checks: a misspelt optional field would otherwise
// be dropped without a word.
func DecodeStrict(v any, into any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(into)
}

// Manifest encodes a typed object as the manifest of a provider-kubernetes
// Object, keeping only what the manifest means to own. A typed object also
// carries a null creationTimestamp and empty spec and status; provider-
// kubernetes applies the manifest by server-side apply, which would take
// them as opinions (an empty status is not ours to set).
func Manifest(obj any) ([]byte, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("a manifest must be a JSON object: %w", err)
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	if spec, ok := m["spec"].(map[string]any); ok && len(spec) == 0 {
		delete(m, "spec")
	}
	return json.Marshal(m)
}
