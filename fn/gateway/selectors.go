package gateway

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// selectorHTTP is SEL-HTTP: the port-80 listener admits routes only from the
// TenantGateway's own namespace (its redirect route) and cert-manager's (the
// ACME HTTP-01 challenge routes), so no application can serve cleartext.
func selectorHTTP(in *Input) *gwapiv1.AllowedRoutes {
	values := []string{in.Namespace}
	if in.CertManagerNamespace != in.Namespace {
		values = append(values, in.CertManagerNamespace)
	}
	return &gwapiv1.AllowedRoutes{Namespaces: fromSelector(&metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key:      LabelNamespaceName,
			Operator: metav1.LabelSelectorOpIn,
			Values:   values,
		}},
	})}
}

// selectorLabel is SEL-LABEL: every namespace that publishes through this
// Gateway, the inheriting children and the attached namespaces alike.
func selectorLabel(in *Input) *gwapiv1.AllowedRoutes {
	return &gwapiv1.AllowedRoutes{Namespaces: fromSelector(&metav1.LabelSelector{
		MatchLabels: map[string]string{LabelNamespaceGateway: in.Namespace},
	})}
}

// selectorPin is SEL-PIN(ns): SEL-LABEL narrowed to the one namespace that
// won a contested hostname, so the Gateway's controller itself refuses the
// losers' routes.
func selectorPin(in *Input, ns string) *gwapiv1.AllowedRoutes {
	return &gwapiv1.AllowedRoutes{Namespaces: fromSelector(&metav1.LabelSelector{
		MatchLabels: map[string]string{LabelNamespaceGateway: in.Namespace, LabelNamespaceName: ns},
	})}
}

// selectorFor is SEL-PIN when the hostname is contested, else SEL-LABEL.
func selectorFor(in *Input, pins map[string]string, hostname string) *gwapiv1.AllowedRoutes {
	if ns, ok := pins[hostname]; ok {
		return selectorPin(in, ns)
	}
	return selectorLabel(in)
}

// withKinds443 adds KINDS-443: every port-443 listener lists exactly
// HTTPRoute and TLSRoute, so that Cilium keeps the listeners apart and no
// other route kind attaches outside the route-hostname admission policy.
func withKinds443(a *gwapiv1.AllowedRoutes) *gwapiv1.AllowedRoutes {
	g := gwapiv1.Group(gwapiv1.GroupName)
	a.Kinds = []gwapiv1.RouteGroupKind{{Group: &g, Kind: KindHTTPRoute}, {Group: &g, Kind: KindTLSRoute}}
	return a
}

func fromSelector(s *metav1.LabelSelector) *gwapiv1.RouteNamespaces {
	from := gwapiv1.NamespacesFromSelector
	return &gwapiv1.RouteNamespaces{From: &from, Selector: s}
}
