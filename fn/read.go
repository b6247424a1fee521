package fn

import (
	"fmt"
	"sort"

	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// reqPlatform is the requirement of every run: the platform
// EnvironmentConfig (see Platform settings in docs/design.md).
const reqPlatform = "platform"

// Keys of an object the function reads.
const (
	keyMetadata = "metadata"
	keySpec     = "spec"
)

// field walks a path of object keys; nil when any step is missing.
func field(s *structpb.Struct, path ...string) *structpb.Value {
	var v *structpb.Value
	for i, k := range path {
		if i > 0 {
			s = v.GetStructValue()
		}
		v = s.GetFields()[k]
		if v == nil {
			return nil
		}
	}
	return v
}

// str is the string at path, or "".
func str(s *structpb.Struct, path ...string) string {
	return field(s, path...).GetStringValue()
}

// list is the list at path: nil when absent or null, an error when it is
// something else.
func list(s *structpb.Struct, path ...string) ([]*structpb.Value, error) {
	v := field(s, path...)
	switch k := v.GetKind().(type) {
	case nil, *structpb.Value_NullValue:
		return nil, nil
	case *structpb.Value_ListValue:
		return k.ListValue.GetValues(), nil
	default:
		return nil, fmt.Errorf("spec.%s is not a list", path[len(path)-1])
	}
}

// stringMap reads an object of strings, leaving out values of other types.
func stringMap(v val) map[string]string {
	out := map[string]string{}
	v.object().each(func(k string, f val) {
		if f.isString() {
			out[k] = f.str()
		}
	})
	return out
}

// observeNamespaces reads the namespaces of a requirement, sorted by name. A
// namespace with labels that are not strings is skipped with a warning.
func observeNamespaces(req *fnv1.RunFunctionRequest, name string) ([]gateway.Namespace, []string) {
	items := req.GetRequiredResources()[name].GetItems()
	out := make([]gateway.Namespace, 0, len(items))
	var warnings []string
	for _, it := range items {
		s := it.GetResource()
		n := gateway.Namespace{Name: str(s, keyMetadata, "name"), Labels: map[string]string{}}
		bad := ""
		for k, v := range field(s, keyMetadata, "labels").GetStructValue().GetFields() {
			sv, ok := v.GetKind().(*structpb.Value_StringValue)
			if !ok {
				bad = k
				break
			}
			n.Labels[k] = sv.StringValue
		}
		if n.Name == "" || bad != "" {
			warnings = append(warnings, fmt.Sprintf("Namespace %q: label %q is not a string", n.Name, bad))
			continue
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, warnings
}

// resolved reports whether Crossplane has answered every requirement this
// run asked for, so the function composes from complete observations.
func resolved(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) bool {
	return len(unanswered(req, rsp)) == 0
}

// unanswered are the names of the schemas and resources this run asked for
// that the request does not answer yet.
func unanswered(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) []string {
	var out []string
	for name := range rsp.GetRequirements().GetSchemas() {
		if _, ok := request.GetRequiredSchema(req, name); !ok {
			out = append(out, name)
		}
	}
	for name := range rsp.GetRequirements().GetResources() {
		if _, ok := req.GetRequiredResources()[name]; !ok {
			out = append(out, name)
		}
	}
	return out
}

// platformData is the data of the required platform EnvironmentConfig;
// found is false when there is none.
func platformData(req *fnv1.RunFunctionRequest) (data map[string]any, found bool) {
	items := req.GetRequiredResources()[reqPlatform].GetItems()
	if len(items) == 0 {
		return map[string]any{}, false
	}
	data, _ = items[0].GetResource().AsMap()["data"].(map[string]any)
	return data, true
}
