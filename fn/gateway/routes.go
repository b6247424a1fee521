package gateway

import (
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Route kinds the function reads.
const (
	KindHTTPRoute = "HTTPRoute"
	KindTLSRoute  = "TLSRoute"
)

// A Route is the part of an HTTPRoute or TLSRoute the function needs.
type Route struct {
	Kind       string
	Namespace  string
	Name       string
	ParentRefs []ParentRef
	Hostnames  []string
}

// ID is <kind>/<namespace>/<name>, the way status names a route.
func (r Route) ID() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// A ParentRef is one parentRef of a route; empty fields were unset.
type ParentRef struct {
	Group     string
	Kind      string
	Namespace string
	Name      string
	// SectionName is the listener the route names, Port the port; a route
	// naming either attaches only to the listeners they select (see
	// Listener selection in docs/design.md).
	SectionName string
	Port        int32
}

// A Namespace is what the function reads of a namespace.
type Namespace struct {
	Name        string
	Labels      map[string]string
	Annotations map[string]string
}

// Label keys of the tenant layer the function reads.
const (
	// LabelNamespaceHost is a tenant namespace's apex.
	LabelNamespaceHost = "namespace.cozystack.io/host"
)

// parentRefsTo are the parentRefs of r that target this TenantGateway's
// Gateway; a route with none does not attach. Which listeners they select
// is judged per hostname (see selection.go).
func parentRefsTo(in *Input, r *Route) []ParentRef {
	var out []ParentRef
	for _, p := range r.ParentRefs {
		ns := p.Namespace
		if ns == "" {
			ns = r.Namespace
		}
		if (p.Group == "" || p.Group == gwapiv1.GroupName) &&
			(p.Kind == "" || p.Kind == "Gateway") &&
			ns == in.Namespace && p.Name == in.Name {
			out = append(out, p)
		}
	}
	return out
}

// isCozy reports whether a namespace belongs to the platform. Platform
// services win hostname conflicts against tenants.
func isCozy(ns string) bool { return strings.HasPrefix(ns, "cozy-") }
