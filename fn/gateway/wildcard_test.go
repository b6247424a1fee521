package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

func TestWildcardModes(t *testing.T) {
	nss := []Namespace{labelled("tenant-root", "example.org"), labelled("tenant-bob", "bob.example.org"), labelled("tenant-alice", "alice.example.org"), labelled("tenant-acme", "customer1.example"), labelled("tenant-alice2", "alice.example.org")}
	routes := []Route{
		routeTo("tenant-root", "www", "www.example.org", "*.example.org"),
		routeTo("tenant-alice", "harbor", "harbor.alice.example.org"),
		routeTo("tenant-acme", "shop", "shop.customer1.example"),
	}
	hostnames := func(covered string) []string {
		return []string{
			"*.example.org HTTPRoute/tenant-root/www Covered",
			"harbor.alice.example.org HTTPRoute/tenant-alice/harbor Covered",
			"shop.customer1.example HTTPRoute/tenant-acme/shop OutsideApex",
			"www.example.org HTTPRoute/tenant-root/www " + covered,
		}
	}
	children := []string{"alice.example.org tenant-alice Listening", "bob.example.org tenant-bob Idle", "customer1.example tenant-acme OutsideApex"}
	lbl := "label=tenant-root"
	// The apex listeners admit, by name, the namespaces delegated the apex;
	// each child's listener admits only its own.
	apexSel := lbl + " names=tenant-root"
	aliceSel := lbl + " host=alice.example.org"
	kHTTP := "kinds=HTTPRoute"
	cases := map[string]struct {
		spec v1alpha1.TenantGatewaySpec
		want view
	}{
		"DNS01": {
			spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, DNS01: &v1alpha1.DNS01{Cloudflare: &v1alpha1.CloudflareProvider{APITokenSecretRef: v1alpha1.SecretKeySelector{Name: "cf", Key: "token"}}}},
			want: view{
				Listeners: []string{
					httpLine,
					"https 443/HTTPS *.example.org " + apexSel + " " + k443 + " cert=cozystack-gateway-tls",
					"https-apex 443/HTTPS example.org " + apexSel + " " + k443 + " cert=cozystack-gateway-tls",
					"https-child-alice-cf290f3a 443/HTTPS *.alice.example.org " + aliceSel + " " + k443 + " cert=cozystack-gateway-tls",
					// tenant-root's *.example.org would answer alice's bare apex.
					"https-alice-cf290f3a 443/HTTPS alice.example.org " + aliceSel + " " + k443 + " cert=cozystack-gateway-tls",
				},
				Certificates: []string{"cozystack-gateway-tls secret=cozystack-gateway-tls example.org,*.example.org,alice.example.org,*.alice.example.org"},
				Hostnames:    hostnames("Covered"),
				Children:     children,
				Keys:         []string{"gateway", "issuer", "certificate-wildcard", "redirect", "zone-guard-alice-cf290f3a", "report-tenant-acme"},
			},
		},
		"ExistingSecret": {
			spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeExistingSecret, WildcardSecretRef: &v1alpha1.LocalSecretReference{Name: "wild"}},
			want: view{
				Listeners: []string{
					httpLine,
					"https 443/HTTPS *.example.org " + apexSel + " " + k443 + " cert=wild",
					"https-apex 443/HTTPS example.org " + apexSel + " " + k443 + " cert=wild",
					"https-child-alice-cf290f3a 443/HTTPS *.alice.example.org " + aliceSel + " " + k443 + " cert=wild",
					"https-alice-cf290f3a 443/HTTPS alice.example.org " + aliceSel + " " + k443 + " cert=wild",
				},
				Hostnames: hostnames("Covered"),
				Children:  children,
				Keys:      []string{"gateway", "redirect", "zone-guard-alice-cf290f3a", "report-tenant-acme"},
			},
		},
		"Edge": {
			spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeEdge, TLSPassthroughServices: []v1alpha1.DNSLabel{"api"}},
			want: view{
				Listeners: []string{
					"edge 80/HTTP *.example.org " + apexSel + " " + kHTTP,
					"edge-apex 80/HTTP example.org " + apexSel + " " + kHTTP,
					"edge-child-alice-cf290f3a 80/HTTP *.alice.example.org " + aliceSel + " " + kHTTP,
					"edge-alice-cf290f3a 80/HTTP alice.example.org " + aliceSel + " " + kHTTP,
				},
				Hostnames: hostnames("Covered"),
				Children:  children,
				Keys:      []string{"gateway", "zone-guard-alice-cf290f3a", "report-tenant-acme"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := compose(t, tc.spec, routes, nss)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: -want, +got:\n%s", name, diff)
			}
		})
	}
}
