package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

func TestGatewayObject(t *testing.T) {
	http := gwapiv1.Listener{Name: ListenerHTTP, Port: 80, Protocol: gwapiv1.HTTPProtocolType}
	cases := map[string]struct {
		reason    string
		in        Input
		listeners []gwapiv1.Listener
		want      *gwapiv1.Gateway
	}{
		"NamedAfterTheTenantGateway": {
			reason:    "The Gateway has the TenantGateway's name and namespace, its class, the listeners planned, and the gateway label naming the namespace it serves",
			in:        Input{Name: "cozystack", Namespace: "tenant-root", Spec: v1alpha1.TenantGatewaySpec{GatewayClassName: "envoy"}},
			listeners: []gwapiv1.Listener{http},
			want: &gwapiv1.Gateway{
				TypeMeta: metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway"},
				ObjectMeta: metav1.ObjectMeta{Name: "cozystack", Namespace: "tenant-root", Labels: map[string]string{
					kube.LabelManagedBy: kube.ManagedBy, kube.LabelTenantGateway: "cozystack", kube.LabelGateway: "tenant-root",
				}},
				Spec: gwapiv1.GatewaySpec{GatewayClassName: "envoy", Listeners: []gwapiv1.Listener{http}},
			},
		},
		"AnotherTenant": {
			reason: "The gateway label is the namespace, not the TenantGateway's name",
			in:     Input{Name: "edge", Namespace: "tenant-alice", Spec: v1alpha1.TenantGatewaySpec{GatewayClassName: "cilium"}},
			want: &gwapiv1.Gateway{
				TypeMeta: metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway"},
				ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "tenant-alice", Labels: map[string]string{
					kube.LabelManagedBy: kube.ManagedBy, kube.LabelTenantGateway: "edge", kube.LabelGateway: "tenant-alice",
				}},
				Spec: gwapiv1.GatewaySpec{GatewayClassName: "cilium"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, gatewayObject(&tc.in, tc.listeners)); diff != "" {
				t.Errorf("%s\ngatewayObject(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
