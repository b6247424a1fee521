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

// dropZero deletes the field at path if it holds its zero value.
func dropZero(obj map[string]any, path []string) {
	m := obj
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	last := path[len(path)-1]
	switch v := m[last].(type) {
	case bool:
		if !v {
			delete(m, last)
		}
	case string:
		if v == "" {
			delete(m, last)
		}
	}
}
