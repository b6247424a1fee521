package fn

import (
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// Observed routes are read straight from the request's protobuf Structs, or
// from the bytes the codec kept, field by field: the function needs a
// handful of fields of every route in the cluster, and materialising whole
// objects would cost far more than the computation itself.

// observeRoutes reads every route of a requirement. A malformed route is
// skipped with a warning naming it; it never stops the others.
func observeRoutes(req *fnv1.RunFunctionRequest, name, kind string) ([]gateway.Route, []string) {
	rs := req.GetRequiredResources()[name]
	items := rs.GetItems()
	if len(items) == 0 && rs != nil {
		// Kept as bytes by the codec (see Lazy decoding in docs/design.md).
		return observeWireRoutes(rs.ProtoReflect().GetUnknown(), kind)
	}
	routes := make([]gateway.Route, 0, len(items))
	var warnings []string
	for _, it := range items {
		r, err := decodeRoute(kind, it.GetResource())
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s %s/%s: %v", kind, str(it.GetResource(), keyMetadata, "namespace"), str(it.GetResource(), keyMetadata, "name"), err))
			continue
		}
		routes = append(routes, r)
	}
	return routes, warnings
}

func decodeRoute(kind string, s *structpb.Struct) (gateway.Route, error) {
	r := gateway.Route{Kind: kind, Namespace: str(s, keyMetadata, "namespace"), Name: str(s, keyMetadata, "name")}
	if r.Name == "" || r.Namespace == "" {
		return r, fmt.Errorf("metadata.name and metadata.namespace are required")
	}
	refs, err := list(s, keySpec, "parentRefs")
	if err != nil {
		return r, err
	}
	for i, v := range refs {
		p := v.GetStructValue()
		if p == nil {
			return r, fmt.Errorf("spec.parentRefs[%d] is not an object", i)
		}
		g := field(p, "group")
		r.ParentRefs = append(r.ParentRefs, gateway.ParentRef{
			Group: g.GetStringValue(), CoreGroup: isEmptyString(g), Kind: str(p, "kind"), Namespace: str(p, "namespace"), Name: str(p, "name"),
			SectionName: str(p, "sectionName"), Port: int32(field(p, "port").GetNumberValue()),
		})
	}
	r.Solver = str(s, keyMetadata, "labels", gateway.LabelHTTP01Solver) == "true"
	hosts, err := list(s, keySpec, "hostnames")
	if err != nil {
		return r, err
	}
	for i, v := range hosts {
		h, ok := v.GetKind().(*structpb.Value_StringValue)
		if !ok {
			return r, fmt.Errorf("spec.hostnames[%d] is not a string", i)
		}
		r.Hostnames = append(r.Hostnames, h.StringValue)
	}
	return r, nil
}

// observeWireRoutes reads every route of a requirement kept as the bytes of
// its Resources message, as observeRoutes does from Structs.
func observeWireRoutes(b []byte, kind string) ([]gateway.Route, []string) {
	items := wireItems(b)
	routes := make([]gateway.Route, 0, len(items))
	var warnings []string
	for _, s := range items {
		r, err := decodeWireRoute(kind, s)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s %s/%s: %v", kind, r.Namespace, r.Name, err))
			continue
		}
		routes = append(routes, r)
	}
	return routes, warnings
}

// Keys decodeWireRoute looks up, and where it finds them.
var (
	keysRoute     = []string{keyMetadata, keySpec}
	keysMetadata  = []string{"name", "namespace", "labels"}
	keysLabels    = []string{gateway.LabelHTTP01Solver}
	keysSpec      = []string{"parentRefs", "hostnames"}
	keysParentRef = []string{"group", "kind", "namespace", "name", "sectionName", "port"}
)

// decodeWireRoute is decodeRoute on a Struct's bytes: the same fields, the
// same errors.
func decodeWireRoute(kind string, s []byte) (gateway.Route, error) {
	var top, spec [2]wireValue
	lookup(s, keysRoute, top[:])
	r := wireRouteMeta(kind, top[0])
	if r.Name == "" || r.Namespace == "" {
		return r, fmt.Errorf("metadata.name and metadata.namespace are required")
	}
	if sp, ok := top[1].object(); ok {
		lookup(sp, keysSpec, spec[:])
	}
	refs, err := wireList(spec[0], "parentRefs")
	if err != nil {
		return r, err
	}
	var ref [6]wireValue
	for i, v := range refs {
		p, ok := v.object()
		if !ok {
			return r, fmt.Errorf("spec.parentRefs[%d] is not an object", i)
		}
		lookup(p, keysParentRef, ref[:])
		r.ParentRefs = append(r.ParentRefs, gateway.ParentRef{
			Group: ref[0].str(), CoreGroup: ref[0].kind == fieldValueString && len(ref[0].payload) == 0, Kind: ref[1].str(), Namespace: ref[2].str(), Name: ref[3].str(),
			SectionName: ref[4].str(), Port: int32(ref[5].number()),
		})
	}
	hosts, err := wireList(spec[1], "hostnames")
	if err != nil {
		return r, err
	}
	for i, v := range hosts {
		if v.kind != fieldValueString {
			return r, fmt.Errorf("spec.hostnames[%d] is not a string", i)
		}
		r.Hostnames = append(r.Hostnames, v.str())
	}
	return r, nil
}

// isEmptyString reports whether v is present and the empty string.
func isEmptyString(v *structpb.Value) bool {
	s, ok := v.GetKind().(*structpb.Value_StringValue)
	return ok && s.StringValue == ""
}

// wireRouteMeta is the route's kind, name, namespace and solver label, from
// its metadata's bytes.
func wireRouteMeta(kind string, metadata wireValue) gateway.Route {
	var md [3]wireValue
	var solver [1]wireValue
	if m, ok := metadata.object(); ok {
		lookup(m, keysMetadata, md[:])
	}
	if l, ok := md[2].object(); ok {
		lookup(l, keysLabels, solver[:])
	}
	return gateway.Route{Kind: kind, Namespace: md[1].str(), Name: md[0].str(), Solver: solver[0].str() == "true"}
}

// wireList is list on a wire Value.
func wireList(v wireValue, name string) ([]wireValue, error) {
	switch v.kind {
	case 0, fieldValueNull:
		return nil, nil
	case fieldValueList:
		return v.values(), nil
	default:
		return nil, fmt.Errorf("spec.%s is not a list", name)
	}
}
