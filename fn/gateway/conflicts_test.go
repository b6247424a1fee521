package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

func TestConflicts(t *testing.T) {
	nss := []Namespace{labelled("cozy-harbor", "example.org"), labelled("tenant-foo", "example.org"), labelled("tenant-bar", "example.org")}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.TenantGatewaySpec
		routes []Route
		want   view
	}{
		"CozyWinsHTTP01": {
			reason: "A cozy-* namespace beats a tenant; the hostname's own listener is pinned to it",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org"},
			routes: []Route{routeTo("tenant-foo", "a", "harbor.example.org"), routeTo("cozy-harbor", "z", "harbor.example.org")},
			want: view{
				Listeners:    []string{httpLine, "https-harbor-91fb3185 443/HTTPS harbor.example.org pin=cozy-harbor " + k443 + " cert=cozystack-harbor-91fb3185-tls"},
				Certificates: []string{"cozystack-harbor-91fb3185-tls secret=cozystack-harbor-91fb3185-tls harbor.example.org"},
				Hostnames:    []string{"harbor.example.org HTTPRoute/cozy-harbor/z Listening", "harbor.example.org HTTPRoute/tenant-foo/a Conflict"},
				Conflicts:    []string{"harbor.example.org winner=HTTPRoute/cozy-harbor/z losers=HTTPRoute/tenant-foo/a"},
				Keys:         []string{"gateway", "issuer", "certificate-https-harbor-91fb3185", "redirect", "report-tenant-foo"},
			},
		},
		"SmallestNamespaceNameAndSameNamespaceNeverLoses": {
			reason: "Between tenants equally delegated the smallest namespace/name wins; every route of the winner's namespace keeps the hostname",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org"},
			routes: []Route{
				routeTo("tenant-foo", "b", "x.example.org"),
				routeTo("tenant-foo", "c", "x.example.org"),
				routeTo("tenant-bar", "z", "x.example.org"),
			},
			want: view{
				Listeners:    []string{httpLine, "https-x-" + Hex8("x.example.org") + " 443/HTTPS x.example.org pin=tenant-bar " + k443 + " cert=cozystack-x-" + Hex8("x.example.org") + "-tls"},
				Certificates: []string{"cozystack-x-" + Hex8("x.example.org") + "-tls secret=cozystack-x-" + Hex8("x.example.org") + "-tls x.example.org"},
				Hostnames: []string{
					"x.example.org HTTPRoute/tenant-bar/z Listening",
					"x.example.org HTTPRoute/tenant-foo/b Conflict",
					"x.example.org HTTPRoute/tenant-foo/c Conflict",
				},
				Conflicts: []string{"x.example.org winner=HTTPRoute/tenant-bar/z losers=HTTPRoute/tenant-foo/b,HTTPRoute/tenant-foo/c"},
				Keys:      []string{"gateway", "issuer", "certificate-https-x-" + Hex8("x.example.org"), "redirect", "report-tenant-foo"},
			},
		},
		"DNS01PinsAndApex": {
			reason: "In a wildcard mode a contested hostname gets an extra exact listener pinned to the winner; a contested apex pins https-apex itself",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeExistingSecret, WildcardSecretRef: &v1alpha1.LocalSecretReference{Name: "wild"}},
			routes: []Route{
				routeTo("tenant-foo", "a", "harbor.example.org", "example.org"),
				routeTo("cozy-harbor", "h", "harbor.example.org", "example.org"),
				routeTo("tenant-foo", "b", "only.example.org"),
			},
			want: view{
				Listeners: []string{
					httpLine,
					"https 443/HTTPS *.example.org label=tenant-root names=cozy-harbor,tenant-bar,tenant-foo,tenant-root " + k443 + " cert=wild",
					"https-apex 443/HTTPS example.org pin=cozy-harbor " + k443 + " cert=wild",
					"https-harbor-91fb3185 443/HTTPS harbor.example.org pin=cozy-harbor " + k443 + " cert=wild",
				},
				Hostnames: []string{
					"example.org HTTPRoute/cozy-harbor/h Covered",
					"example.org HTTPRoute/tenant-foo/a Conflict",
					"harbor.example.org HTTPRoute/cozy-harbor/h Covered",
					"harbor.example.org HTTPRoute/tenant-foo/a Conflict",
					"only.example.org HTTPRoute/tenant-foo/b Covered",
				},
				Conflicts: []string{
					"example.org winner=HTTPRoute/cozy-harbor/h losers=HTTPRoute/tenant-foo/a",
					"harbor.example.org winner=HTTPRoute/cozy-harbor/h losers=HTTPRoute/tenant-foo/a",
				},
				Keys: []string{"gateway", "redirect", "report-tenant-foo"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := compose(t, tc.spec, tc.routes, nss)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
