package gateway

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// An admission is who a listener lets attach: the rule the function judges
// claims by, and the namespace selector the Gateway's controller enforces.
// Both come from here so they cannot drift apart (see "Who may attach" in
// docs/design.md).
type admission struct {
	kind admitKind
	// value is the child apex of admitChild and the namespace of admitPin.
	value string
	// exclude are namespaces kept off the listener although its rule
	// admits them: each lost a name (or reached into a child's zone)
	// under this listener's hostname, and the pin that would have kept
	// only that name from them could not be made (see Budgets in
	// docs/design.md). Sorted.
	exclude []string
}

// excluding is a with ns kept off.
func (a admission) excluding(ns string) admission {
	if !slices.Contains(a.exclude, ns) {
		a.exclude = append(slices.Clone(a.exclude), ns)
		slices.Sort(a.exclude)
	}
	return a
}

type admitKind int

const (
	// admitHTTP is the port-80 listener: the TenantGateway's namespace (its
	// redirect route) and cert-manager's (ACME HTTP-01 challenge routes).
	admitHTTP admitKind = iota
	// admitApex is the apex and its wildcard: admitted namespaces whose host
	// label is the apex, and the owner and attached namespaces without one.
	admitApex
	// admitChild is a child apex's wildcard: admitted namespaces whose host
	// label is that apex.
	admitChild
	// admitPin is one hostname's listener: the one namespace that owns it.
	admitPin
	// admitPublishers is a passthrough listener: the TenantGateway's
	// namespace and its attached namespaces that are delegated the apex.
	admitPublishers
)

func pinTo(ns string) admission { return admission{kind: admitPin, value: ns} }

// admits reports whether a route from ns may attach, with the labels the
// namespace has once the function's patches are applied.
func (a admission) admits(t *tenancy, ns string) bool {
	if slices.Contains(a.exclude, ns) {
		return false
	}
	switch a.kind {
	case admitHTTP:
		return ns == t.owner || ns == t.certManager
	case admitApex:
		return t.inApexZone(ns)
	case admitChild:
		return t.admitted(ns) && t.host(ns) == a.value
	case admitPin:
		return t.admitted(ns) && ns == a.value
	case admitPublishers:
		return t.publisher[ns] && t.inApexZone(ns)
	}
	return false
}

// allowedRoutes is the listener's namespace selector. Every selector but
// http's also requires the gateway label, so only admitted namespaces ever
// match. Label selectors have no OR, so the apex listeners list their
// namespaces by name: an allow-list, which fails closed for a namespace
// created after the last run and does not change when a child tenant comes
// or goes.
func (a admission) allowedRoutes(t *tenancy) *gwapiv1.AllowedRoutes {
	gateway := map[string]string{kube.LabelNamespaceGateway: t.owner}
	s := &metav1.LabelSelector{}
	switch a.kind {
	case admitHTTP:
		values := []string{t.owner}
		if t.certManager != t.owner {
			values = append(values, t.certManager)
		}
		s.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: kube.LabelNamespaceName, Operator: metav1.LabelSelectorOpIn, Values: values}}
	case admitApex:
		s.MatchLabels = gateway
		names := t.apexZone
		if len(names) == 0 {
			// In needs a value, and no namespace is named "".
			names = []string{""}
		}
		s.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: kube.LabelNamespaceName, Operator: metav1.LabelSelectorOpIn, Values: names}}
	case admitChild:
		s.MatchLabels = map[string]string{kube.LabelNamespaceGateway: t.owner, kube.LabelNamespaceHost: a.value}
	case admitPin:
		s.MatchLabels = map[string]string{kube.LabelNamespaceGateway: t.owner, kube.LabelNamespaceName: a.value}
	case admitPublishers:
		s.MatchLabels = gateway
		s.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: kube.LabelNamespaceName, Operator: metav1.LabelSelectorOpIn, Values: t.apexPublishers()}}
	}
	if len(a.exclude) > 0 {
		s.MatchExpressions = append(s.MatchExpressions, metav1.LabelSelectorRequirement{Key: kube.LabelNamespaceName, Operator: metav1.LabelSelectorOpNotIn, Values: a.exclude})
	}
	from := gwapiv1.NamespacesFromSelector
	return &gwapiv1.AllowedRoutes{Namespaces: &gwapiv1.RouteNamespaces{From: &from, Selector: s}}
}

// CiliumControllerName is the GatewayClass controller of Cilium, which needs
// identical route kinds on every port-443 listener to keep HTTPS and TLS
// passthrough listeners on one port apart.
const CiliumControllerName = "io.cilium/gateway-controller"

// ciliumQuirk reports whether the Gateway's class is implemented by Cilium.
func ciliumQuirk(in *Input) bool {
	return in.GatewayClass != nil && in.GatewayClass.ControllerName == CiliumControllerName
}

// withKinds443 sets the route kinds of a port-443 listener: exactly HTTPRoute
// and TLSRoute on every one where the class is Cilium's, else the kinds its
// protocol serves (HTTPS: HTTPRoute; TLS passthrough: TLSRoute), which is
// what a conformant implementation accepts (Envoy Gateway refuses a TLSRoute
// kind on an HTTPS listener with InvalidRouteKinds). Either way no other kind
// (a GRPCRoute, which no admission policy of ours checks on these) attaches.
func withKinds443(in *Input, protocol gwapiv1.ProtocolType, a *gwapiv1.AllowedRoutes) *gwapiv1.AllowedRoutes {
	g := gwapiv1.Group(gwapiv1.GroupName)
	switch {
	case ciliumQuirk(in):
		a.Kinds = []gwapiv1.RouteGroupKind{{Group: &g, Kind: KindHTTPRoute}, {Group: &g, Kind: KindTLSRoute}}
	case protocol == gwapiv1.TLSProtocolType:
		a.Kinds = []gwapiv1.RouteGroupKind{{Group: &g, Kind: KindTLSRoute}}
	default:
		a.Kinds = []gwapiv1.RouteGroupKind{{Group: &g, Kind: KindHTTPRoute}}
	}
	return a
}

// withHTTPRouteKind limits a plain-HTTP edge listener to HTTPRoutes, so that
// no route kind the admission policies do not check (GRPCRoute) attaches.
func withHTTPRouteKind(a *gwapiv1.AllowedRoutes) *gwapiv1.AllowedRoutes {
	g := gwapiv1.Group(gwapiv1.GroupName)
	a.Kinds = []gwapiv1.RouteGroupKind{{Group: &g, Kind: KindHTTPRoute}}
	return a
}
