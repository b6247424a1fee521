package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// TestComposeLeavesItsInput: Compose reads its Input and writes nothing the
// caller shares with it (the namespaces it sorts, the spec lists it drops
// repeats from, the listeners the status remembers), so that the edge may
// hand it the same observations again.
func TestComposeLeavesItsInput(t *testing.T) {
	given := func() Input {
		nss := []Namespace{
			{Name: "tenant-root", Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-root"}},
			{Name: "tenant-bob", Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-root", kube.LabelNamespaceHost: "bob.example.org"}},
			{Name: "tenant-alice", Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-root", kube.LabelNamespaceHost: "alice.example.org"}},
		}
		named := map[string]*Namespace{}
		for i := range nss {
			named[nss[i].Name] = &nss[i]
		}
		return Input{
			Name: "cozystack", Namespace: "tenant-root", CertManagerNamespace: "cozy-cert-manager",
			Spec: v1alpha1.TenantGatewaySpec{
				Apex: "example.org", CertMode: v1alpha1.CertModeDNS01,
				DNS01:              &v1alpha1.DNS01{Cloudflare: &v1alpha1.CloudflareProvider{APITokenSecretRef: v1alpha1.SecretKeySelector{Name: "cf", Key: "token"}}},
				AttachedNamespaces: []v1alpha1.DNSLabel{"tenant-bob", "tenant-bob"},
			},
			Routes:          []Route{routeTo("tenant-bob", "shop", "shop.bob.example.org"), routeTo("tenant-alice", "web", "web.alice.example.org")},
			Namespaces:      nss,
			NamedNamespaces: named,
			Previous:        PreviousStatus{Listeners: map[string]string{ListenerHTTPS: "*.example.org"}},
			Quota:           acme.LetsEncryptQuota,
		}
	}
	in := given()
	if _, err := Compose(in); err != nil {
		t.Fatalf("Compose: %v", err)
	}
	if diff := cmp.Diff(given(), in); diff != "" {
		t.Errorf("Compose changed its Input (-given, +after):\n%s", diff)
	}
}
