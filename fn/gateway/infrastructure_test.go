package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

func TestPinnedAddress(t *testing.T) {
	ip, host := gwapiv1.AddressType("IPAddress"), gwapiv1.AddressType("Hostname")
	cases := map[string]struct {
		reason    string
		infra     *v1alpha1.GatewayInfrastructure
		addresses []v1alpha1.GatewayAddress
		wantInfra *gwapiv1.GatewayInfrastructure
		wantAddrs []gwapiv1.GatewaySpecAddress
	}{
		"None": {reason: "Nothing asked, nothing set: the implementation picks the address."},
		"EmptyInfrastructure": {
			reason: "An infrastructure without labels or annotations sets nothing.",
			infra:  &v1alpha1.GatewayInfrastructure{},
		},
		"CiliumLBIPAM": {
			reason:    "Cilium's LB-IPAM annotation and a pool's label go to spec.infrastructure; an address without a type is an IPAddress.",
			infra:     &v1alpha1.GatewayInfrastructure{Annotations: map[string]string{"lbipam.cilium.io/ips": "198.51.100.10"}, Labels: map[string]string{"pool": "acme"}},
			addresses: []v1alpha1.GatewayAddress{{Value: "198.51.100.10"}, {Type: v1alpha1.AddressHostname, Value: "lb.example.org"}},
			wantInfra: &gwapiv1.GatewayInfrastructure{
				Annotations: map[gwapiv1.AnnotationKey]gwapiv1.AnnotationValue{"lbipam.cilium.io/ips": "198.51.100.10"},
				Labels:      map[gwapiv1.LabelKey]gwapiv1.LabelValue{"pool": "acme"},
			},
			wantAddrs: []gwapiv1.GatewaySpecAddress{{Type: &ip, Value: "198.51.100.10"}, {Type: &host, Value: "lb.example.org"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeEdge, Infrastructure: tc.infra, Addresses: tc.addresses}
			out, err := Compose(Input{Name: "cozystack", Namespace: "tenant-root", UID: uid, Spec: spec})
			if err != nil {
				t.Fatal(err)
			}
			gw, ok := out.Resources[0].Object.(*gwapiv1.Gateway)
			if !ok {
				t.Fatalf("first resource is a %T", out.Resources[0].Object)
			}
			if diff := cmp.Diff(tc.wantInfra, gw.Spec.Infrastructure); diff != "" {
				t.Errorf("%s\nspec.infrastructure -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantAddrs, gw.Spec.Addresses); diff != "" {
				t.Errorf("%s\nspec.addresses -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
