package fn

import (
	"encoding/json"
)

// decodeJSON reads an unstructured object into a Go type. It goes through
// encoding/json rather than the unstructured converter or the SDK's decoder
// because encoding/json's errors name the offending field ("… Go struct field
// TenantGatewaySpec.spec.apex of type string"), which is what an operator
// needs to fix the object.
func decodeJSON(obj map[string]any, into any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}
