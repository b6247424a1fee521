package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

func TestHTTP01(t *testing.T) {
	got := compose(t, v1alpha1.TenantGatewaySpec{Apex: "foo.example.com", TLSPassthroughServices: []v1alpha1.DNSLabel{"api"}},
		[]Route{routeTo("tenant-root", "harbor", "harbor.foo.example.com", "api.foo.example.com", "*.foo.example.com", "shop.example.net")}, nil)
	want := view{
		Listeners: []string{
			httpLine,
			"https-harbor-760d5a8a 443/HTTPS harbor.foo.example.com pin=tenant-root " + k443 + " cert=cozystack-harbor-760d5a8a-tls",
			"tls-api 443/TLS api.foo.example.com label=tenant-root " + kTLS + " Passthrough",
		},
		Certificates: []string{"cozystack-harbor-760d5a8a-tls secret=cozystack-harbor-760d5a8a-tls harbor.foo.example.com"},
		Hostnames: []string{
			"*.foo.example.com HTTPRoute/tenant-root/harbor Invalid",
			// The TLS passthrough listener takes api.foo.example.com; an
			// HTTPRoute cannot be served there.
			"api.foo.example.com HTTPRoute/tenant-root/harbor NoMatchingParent",
			"harbor.foo.example.com HTTPRoute/tenant-root/harbor Listening",
			"shop.example.net HTTPRoute/tenant-root/harbor OutsideApex",
		},
		Keys: []string{"gateway", "issuer", "certificate-https-harbor-760d5a8a", "redirect"},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("http01: -want, +got:\n%s", diff)
	}
}
