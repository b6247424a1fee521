package gateway

import (
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/tgwspec"
)

// Pinning an address (see Pinning an address in docs/design.md): the
// TenantGateway's infrastructure and addresses go into the Gateway's spec
// as they are, typed, for its implementation to act on (Cilium copies
// spec.infrastructure onto the Gateway's Service, where LB-IPAM reads
// lbipam.cilium.io/ips and pools select by label).

// gatewayInfrastructure is spec.infrastructure of the Gateway; nil when the
// TenantGateway asks for none.
func gatewayInfrastructure(in *v1alpha1.GatewayInfrastructure) *gwapiv1.GatewayInfrastructure {
	if in == nil || len(in.Labels) == 0 && len(in.Annotations) == 0 {
		return nil
	}
	out := &gwapiv1.GatewayInfrastructure{}
	if len(in.Labels) > 0 {
		out.Labels = make(map[gwapiv1.LabelKey]gwapiv1.LabelValue, len(in.Labels))
		for k, v := range in.Labels {
			out.Labels[gwapiv1.LabelKey(k)] = gwapiv1.LabelValue(v)
		}
	}
	if len(in.Annotations) > 0 {
		out.Annotations = make(map[gwapiv1.AnnotationKey]gwapiv1.AnnotationValue, len(in.Annotations))
		for k, v := range in.Annotations {
			out.Annotations[gwapiv1.AnnotationKey(k)] = gwapiv1.AnnotationValue(v)
		}
	}
	return out
}

// gatewayAddresses is spec.addresses of the Gateway, in spec order, the
// type defaulted to IPAddress.
func gatewayAddresses(in []v1alpha1.GatewayAddress) []gwapiv1.GatewaySpecAddress {
	if len(in) == 0 {
		return nil
	}
	out := make([]gwapiv1.GatewaySpecAddress, 0, len(in))
	for _, a := range in {
		t := gwapiv1.AddressType(tgwspec.AddressType(a))
		out = append(out, gwapiv1.GatewaySpecAddress{Type: &t, Value: a.Value})
	}
	return out
}
