// Package jsonobj converts between JSON-shaped values and Go types, the one
// way the function does it everywhere: the edge decoding an XR or the
// input, the Tenant computation decoding platform settings, and both
// computations encoding the manifests of provider-kubernetes Objects.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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

// Manifest converts a typed object into the manifest of a provider-kubernetes
// Object, keeping only what the manifest means to own. A typed object also
// carries a null creationTimestamp and empty spec and status; provider-
// kubernetes applies the manifest by server-side apply, which would take
// them as opinions (an empty status is not ours to set).
//
// The manifest is held as unstructured content (the RawExtension's Object,
// not its bytes): it is made once by the unstructured converter, which
// reads the same JSON tags as encoding/json, and the edge places it in the
// composed resource as it is, so no JSON is encoded here only for the edge
// to parse it again; a Gateway with many child listeners composes an Object
// per listener. json.Marshal of the RawExtension still gives the manifest's
// JSON.
func Manifest(obj any) (runtime.RawExtension, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return runtime.RawExtension{}, fmt.Errorf("a manifest must be a pointer to an object: %w", err)
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	if spec, ok := m["spec"].(map[string]any); ok && len(spec) == 0 {
		delete(m, "spec")
	}
	return runtime.RawExtension{Object: &unstructured.Unstructured{Object: m}}, nil
}

// Content is the unstructured content of a manifest Manifest made, or nil
// for one held as bytes.
func Content(m runtime.RawExtension) map[string]any {
	if u, ok := m.Object.(runtime.Unstructured); ok && m.Raw == nil {
		return u.UnstructuredContent()
	}
	return nil
}
