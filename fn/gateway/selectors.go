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
	from := gwapiv1.NamespacesFromSelector
	return &gwapiv1.AllowedRoutes{
		Namespaces: &gwapiv1.RouteNamespaces{
			From: &from,
			Selector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key:      LabelNamespaceName,
					Operator: metav1.LabelSelectorOpIn,
					Values:   values,
				}},
			},
		},
	}
}
