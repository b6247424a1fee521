package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// TestCiliumKinds: a class implemented by Cilium gets HTTPRoute and TLSRoute
// on every port-443 listener (Cilium keeps HTTPS and passthrough listeners of
// one port apart only so); any other class the kinds each protocol serves.
func TestCiliumKinds(t *testing.T) {
	spec := v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeExistingSecret, WildcardSecretRef: &v1alpha1.LocalSecretReference{Name: "w"}, TLSPassthroughServices: []v1alpha1.DNSLabel{"api"}}
	for name, tc := range map[string]struct {
		class      *Class
		https, tls string
	}{
		"Cilium":       {class: &Class{Name: "cilium", ControllerName: CiliumControllerName}, https: "kinds=HTTPRoute,TLSRoute", tls: "kinds=HTTPRoute,TLSRoute"},
		"EnvoyGateway": {class: &Class{Name: "envoy", ControllerName: "gateway.envoyproxy.io/gatewayclass-controller"}, https: k443, tls: kTLS},
		"NotObserved":  {https: k443, tls: kTLS},
	} {
		t.Run(name, func(t *testing.T) {
			out := run(t, Input{Spec: spec, GatewayClass: tc.class})
			want := []string{
				httpLine,
				"https 443/HTTPS *.example.org label=tenant-root names=tenant-root " + tc.https + " cert=w",
				"https-apex 443/HTTPS example.org label=tenant-root names=tenant-root " + tc.https + " cert=w",
				"tls-api 443/TLS api.example.org label=tenant-root " + tc.tls + " Passthrough",
			}
			if diff := cmp.Diff(want, viewOf(t, out).Listeners); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}
