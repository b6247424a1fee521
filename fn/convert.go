package fn

import (
	"fmt"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// zeroFields are fields whose Go types lack omitempty, so a typed object
// always carries them, set to their zero value. Crossplane applies desired
// state with server-side apply, where every field sent is an opinion the
// function then owns; these are dropped so the function only owns what it
// means. Keyed by kind, each a field path below the object.
var zeroFields = map[string][][]string{
	// cert-manager's ACMEIssuer booleans have no omitempty.
	"Issuer": {
		{"spec", "acme", "disableAccountKeyGeneration"},
		{"spec", "acme", "enableDurationFeature"},
		{"spec", "acme", "skipTLSVerify"},
		// Unset route53 secret ref: ambient credentials.
		{"spec", "acme", "solvers", "[]", "dns01", "route53", "secretAccessKeySecretRef"},
	},
	"Certificate": {
		{"spec", "isCA"},
	},
	// provider-kubernetes: the function never asks it to watch.
	"Object": {
		{"spec", "watch"},
	},
}

// toComposed converts a typed object into a desired composed resource. Status
// is never desired: it belongs to the object's controller.
func toComposed(r gateway.Resource) (*composed.Unstructured, error) {
	cd, err := composed.From(r.Object)
	if err != nil {
		return nil, fmt.Errorf("cannot convert %s %q to a composed resource: %w", r.Object.GetObjectKind().GroupVersionKind().Kind, r.Object.GetName(), err)
	}
	delete(cd.Object, "status")
	for _, path := range zeroFields[cd.GetKind()] {
		dropZero(cd.Object, path)
	}
	return cd, nil
}

// dropZero deletes the field at path if it holds its zero value. A path
// element "[]" stands for every item of a list.
func dropZero(obj map[string]any, path []string) {
	if len(path) == 0 {
		return
	}
	k := path[0]
	if len(path) == 1 {
		if isZero(obj[k]) {
			delete(obj, k)
		}
		return
	}
	if path[1] == "[]" {
		items, _ := obj[k].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				dropZero(m, path[2:])
			}
		}
		return
	}
	if m, ok := obj[k].(map[string]any); ok {
		dropZero(m, path[1:])
	}
}

// isZero reports whether v is false, "", or an object of zero values.
func isZero(v any) bool {
	switch v := v.(type) {
	case bool:
		return !v
	case string:
		return v == ""
	case map[string]any:
		for _, f := range v {
			if !isZero(f) {
				return false
			}
		}
		return true
	}
	return false
}
