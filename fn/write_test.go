package fn

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// TestToComposedOwnsOnlyWhatItMeans checks that the composed objects carry no
// status and none of the zero-valued fields the typed structs always emit:
// with server-side apply, each would be an opinion the function then owns.
func TestToComposedOwnsOnlyWhatItMeans(t *testing.T) {
	out, err := gateway.Compose(gateway.Input{Name: "cozystack", Namespace: "tenant-root", CertManagerNamespace: "cozy-cert-manager",
		Spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, DNS01: &v1alpha1.DNS01{
			Provider: v1alpha1.DNS01Route53, Route53: &v1alpha1.Route53Provider{Region: "eu-west-1"},
		}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, r := range out.Resources {
		cd, err := toComposed(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cd.Object["status"]; ok {
			t.Errorf("%s carries a status", r.Key)
		}
		got[r.Key] = cd.Object["spec"]
	}
	wantIssuer := map[string]any{"acme": map[string]any{
		"server":              gateway.ACMEServerProd,
		"privateKeySecretRef": map[string]any{"name": "cozystack-acme-account"},
		"solvers":             []any{map[string]any{"dns01": map[string]any{"route53": map[string]any{"region": "eu-west-1"}}}},
	}}
	if diff := cmp.Diff(wantIssuer, got["issuer"]); diff != "" {
		t.Errorf("issuer spec: -want, +got:\n%s", diff)
	}
	wantCert := map[string]any{
		"secretName": "cozystack-gateway-tls",
		"issuerRef":  map[string]any{"kind": "Issuer", "name": "cozystack-gateway"},
		"dnsNames":   []any{"example.org", "*.example.org"},
	}
	if diff := cmp.Diff(wantCert, got["certificate-wildcard"]); diff != "" {
		t.Errorf("certificate spec: -want, +got:\n%s", diff)
	}
}
