package gateway

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// gatewayObject is the tenant's Gateway, named after the TenantGateway.
func gatewayObject(in *Input, listeners []gwapiv1.Listener) *gwapiv1.Gateway {
	labels := commonLabels(in)
	labels[kube.LabelGateway] = in.Namespace
	return &gwapiv1.Gateway{
		TypeMeta: metav1.TypeMeta{APIVersion: gwapiv1.GroupVersion.String(), Kind: "Gateway"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      in.Name,
			Namespace: in.Namespace,
			Labels:    labels,
		},
		Spec: gwapiv1.GatewaySpec{
			GatewayClassName: gwapiv1.ObjectName(in.Spec.GatewayClassName),
			Listeners:        listeners,
			Infrastructure:   gatewayInfrastructure(in.Spec.Infrastructure),
			Addresses:        gatewayAddresses(in.Spec.Addresses),
		},
	}
}
