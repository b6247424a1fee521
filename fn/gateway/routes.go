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

// attaches reports whether any parentRef of r targets this TenantGateway's
// Gateway. sectionName and port do not matter: a route pinned to one
// listener still asks for its hostnames.
func attaches(in *Input, r *Route) bool {
	for _, p := range r.ParentRefs {
		ns := p.Namespace
		if ns == "" {
			ns = r.Namespace
		}
		if (p.Group == "" || p.Group == gwapiv1.GroupName) &&
			(p.Kind == "" || p.Kind == "Gateway") &&
			ns == in.Namespace && p.Name == in.Name {
			return true
		}
	}
	return false
}

// isCozy reports whether a namespace belongs to the platform. Platform
// services win hostname conflicts against tenants.
func isCozy(ns string) bool { return strings.HasPrefix(ns, "cozy-") }
