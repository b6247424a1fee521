package fn

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
)

// Observed routes and namespaces are read straight from the request's
// protobuf Structs, field by field: the function needs a handful of fields of
// every route in the cluster, and materialising whole objects would cost far
// more than the computation itself.

// observe reads the routes and namespaces a TenantGateway run required, and
// says what it skipped and why.
func observe(req *fnv1.RunFunctionRequest) ([]gateway.Route, []gateway.Namespace, []string) {
	httpRoutes, w1 := observeRoutes(req, reqHTTPRoutes, gateway.KindHTTPRoute)
	tlsRoutes, w2 := observeRoutes(req, reqTLSRoutes, gateway.KindTLSRoute)
	for _, name := range slices.Sorted(maps.Keys(req.GetRequiredResources())) {
		if ns, ok := strings.CutPrefix(name, reqHTTPRoutes+"/"); ok && ns != "" {
			r, w := observeRoutes(req, name, gateway.KindHTTPRoute)
			httpRoutes, w1 = append(httpRoutes, r...), append(w1, w...)
		}
		if ns, ok := strings.CutPrefix(name, reqTLSRoutes+"/"); ok && ns != "" {
			r, w := observeRoutes(req, name, gateway.KindTLSRoute)
			tlsRoutes, w2 = append(tlsRoutes, r...), append(w2, w...)
		}
	}
	namespaces, w3 := observeNamespaces(req, reqNamespaces)
	return append(httpRoutes, tlsRoutes...), namespaces, slices.Concat(w1, w2, w3)
}

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
		r.ParentRefs = append(r.ParentRefs, gateway.ParentRef{
			Group: str(p, "group"), Kind: str(p, "kind"), Namespace: str(p, "namespace"), Name: str(p, "name"),
			SectionName: str(p, "sectionName"), Port: int32(field(p, "port").GetNumberValue()),
		})
	}
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

// Keys of an object the function reads.
const (
	keyMetadata = "metadata"
	keySpec     = "spec"
)

// Keys decodeWireRoute looks up, and where it finds them.
var (
	keysRoute     = []string{keyMetadata, keySpec}
	keysMetadata  = []string{"name", "namespace"}
	keysSpec      = []string{"parentRefs", "hostnames"}
	keysParentRef = []string{"group", "kind", "namespace", "name", "sectionName", "port"}
)

// decodeWireRoute is decodeRoute on a Struct's bytes: the same fields, the
// same errors.
func decodeWireRoute(kind string, s []byte) (gateway.Route, error) {
	var top, md, spec [2]wireValue
	lookup(s, keysRoute, top[:])
	if m, ok := top[0].object(); ok {
		lookup(m, keysMetadata, md[:])
	}
	r := gateway.Route{Kind: kind, Namespace: md[1].str(), Name: md[0].str()}
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
			Group: ref[0].str(), Kind: ref[1].str(), Namespace: ref[2].str(), Name: ref[3].str(),
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

// observeComposed reads what the function needs of every composed resource
// Crossplane observed: conditions, and a Gateway's listeners.
func observeComposed(req *fnv1.RunFunctionRequest) map[string]*gateway.ObservedResource {
	out := map[string]*gateway.ObservedResource{}
	for key, r := range req.GetObserved().GetResources() {
		s := r.GetResource()
		o := &gateway.ObservedResource{Conditions: conditions(field(s, "status", "conditions"))}
		o.Reasons, o.Messages = conditionDetails(field(s, "status", "conditions"))
		switch key {
		case gateway.KeyCertificateWildcard:
			o.DNSNames = []string{}
			for _, v := range field(s, keySpec, "dnsNames").GetListValue().GetValues() {
				o.DNSNames = append(o.DNSNames, v.GetStringValue())
			}
		case gateway.KeyGateway:
			o.ListenerHostnames = map[string]string{}
			for _, v := range field(s, keySpec, "listeners").GetListValue().GetValues() {
				if n := str(v.GetStructValue(), "name"); n != "" {
					o.ListenerNames = append(o.ListenerNames, n)
					o.ListenerHostnames[n] = str(v.GetStructValue(), "hostname")
				}
			}
			o.Listeners = map[string]map[string]string{}
			for _, v := range field(s, "status", "listeners").GetListValue().GetValues() {
				l := v.GetStructValue()
				o.Listeners[str(l, "name")] = conditions(field(l, "conditions"))
			}
		}
		out[key] = o
	}
	return out
}

// conditions maps each condition type in a conditions list to its status.
func conditions(v *structpb.Value) map[string]string {
	out := map[string]string{}
	for _, c := range v.GetListValue().GetValues() {
		out[str(c.GetStructValue(), "type")] = str(c.GetStructValue(), "status")
	}
	return out
}

// conditionDetails maps each condition type in a conditions list to its
// reason and to its message.
func conditionDetails(v *structpb.Value) (reasons, messages map[string]string) {
	reasons, messages = map[string]string{}, map[string]string{}
	for _, c := range v.GetListValue().GetValues() {
		typ := str(c.GetStructValue(), "type")
		reasons[typ], messages[typ] = str(c.GetStructValue(), "reason"), str(c.GetStructValue(), "message")
	}
	return reasons, messages
}

// stringMap reads an object of strings, leaving out values of other types.
func stringMap(v *structpb.Value) map[string]string {
	out := map[string]string{}
	for k, f := range v.GetStructValue().GetFields() {
		if s, ok := f.GetKind().(*structpb.Value_StringValue); ok {
			out[k] = s.StringValue
		}
	}
	return out
}

// observeGatewayClass reads the GatewayClass requirement; nil when the class
// does not exist. Supported features are objects with a name since Gateway
// API v1.2, plain strings before.
func observeGatewayClass(req *fnv1.RunFunctionRequest) *gateway.Class {
	items := req.GetRequiredResources()[reqGatewayClass].GetItems()
	if len(items) == 0 {
		return nil
	}
	s := items[0].GetResource()
	gc := &gateway.Class{Name: str(s, keyMetadata, "name"), ControllerName: str(s, keySpec, "controllerName")}
	for _, f := range field(s, "status", "supportedFeatures").GetListValue().GetValues() {
		name := f.GetStringValue()
		if name == "" {
			name = str(f.GetStructValue(), "name")
		}
		if name != "" {
			gc.SupportedFeatures = append(gc.SupportedFeatures, name)
		}
	}
	return gc
}

// observeNamedNamespaces reads the namespaces looked up by name; a nil value
// means Crossplane found no such namespace.
func observeNamedNamespaces(req *fnv1.RunFunctionRequest, names []string) map[string]*gateway.Namespace {
	out := make(map[string]*gateway.Namespace, len(names))
	for _, n := range names {
		items := req.GetRequiredResources()[reqNamespacePrefix+n].GetItems()
		if len(items) == 0 {
			out[n] = nil
			continue
		}
		s := items[0].GetResource()
		out[n] = &gateway.Namespace{Name: n, Labels: stringMap(field(s, keyMetadata, "labels")), Annotations: stringMap(field(s, keyMetadata, "annotations"))}
	}
	return out
}

// observeProbes reads the look-ups by name of resources about to be composed.
func observeProbes(req *fnv1.RunFunctionRequest) map[string]gateway.Probe {
	out := map[string]gateway.Probe{}
	for name, rs := range req.GetRequiredResources() {
		key, ok := strings.CutPrefix(name, reqProbePrefix)
		if !ok {
			continue
		}
		p := gateway.Probe{}
		if items := rs.GetItems(); len(items) > 0 {
			p.Exists = true
			for _, ref := range field(items[0].GetResource(), keyMetadata, "ownerReferences").GetListValue().GetValues() {
				r := ref.GetStructValue()
				if field(r, "controller").GetBoolValue() {
					p.ControllerUID = str(r, "uid")
				}
			}
		}
		out[key] = p
	}
	return out
}

// observePrevious reads the status the last run wrote on the XR: the
// function's own memory. A status that does not decode (someone edited it)
// is ignored with a warning, never fatal: the next run writes it anew.
func observePrevious(req *fnv1.RunFunctionRequest) (gateway.PreviousStatus, []string) {
	p := gateway.PreviousStatus{Listeners: map[string]string{}, ChildApexes: map[string]bool{}}
	st := field(req.GetObserved().GetComposite().GetResource(), "status").GetStructValue()
	if st == nil {
		return p, nil
	}
	var status v1alpha1.TenantGatewayStatus
	if err := jsonobj.Decode(st.AsMap(), &status); err != nil {
		return p, []string{fmt.Sprintf("ignoring the TenantGateway's status as the function's memory of the last run: %v", err)}
	}
	for _, l := range status.Listeners {
		p.Listeners[l.Name] = l.Hostname
	}
	for _, c := range status.ChildApexes {
		if c.State == v1alpha1.ChildApexListening {
			p.ChildApexes[c.Apex] = true
		}
	}
	if status.Digests != nil {
		p.Digests = *status.Digests
	}
	return p, nil
}
