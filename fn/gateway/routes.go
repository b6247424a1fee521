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
	// Solver is set when the route carries cert-manager's HTTP-01 solver
	// label (LabelHTTP01Solver): in the TenantGateway's namespace and
	// naming only the http listener, it is a challenge route, not a claim.
	Solver bool
}

// LabelHTTP01Solver is the label cert-manager puts on the resources of an
// HTTP-01 challenge, its challenge HTTPRoute among them.
const LabelHTTP01Solver = "acme.cert-manager.io/http01-solver"

// ID is <kind>/<namespace>/<name>, the way status names a route.
func (r Route) ID() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// A ParentRef is one parentRef of a route; empty fields were unset.
type ParentRef struct {
	Group string
	// CoreGroup is set when group was given as "": the core API group,
	// which no Gateway is in (an unset group defaults to the Gateway
	// API's).
	CoreGroup bool
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
		if !p.CoreGroup && (p.Group == "" || p.Group == gwapiv1.GroupName) &&
			(p.Kind == "" || p.Kind == "Gateway") &&
			ns == in.Namespace && p.Name == in.Name {
			out = append(out, p)
		}
	}
	return out
}

// challenge reports whether r is one of cert-manager's HTTP-01 challenge
// routes for this Gateway: in the TenantGateway's namespace, where the Issuer
// is, with the solver label, and every parentRef to this Gateway naming the
// http listener. It attaches only there, claims nothing a tenant could be
// refused, and is no hostname-less route of the owner's.
func challenge(in *Input, r *Route, refs []ParentRef) bool {
	if !r.Solver || r.Kind != KindHTTPRoute || r.Namespace != in.Namespace {
		return false
	}
	for _, p := range refs {
		if p.SectionName != ListenerHTTP {
			return false
		}
	}
	return true
}

// isCozy reports whether a namespace belongs to the platform. Platform
// services win hostname conflicts against tenants.
func isCozy(ns string) bool { return strings.HasPrefix(ns, "cozy-") }
