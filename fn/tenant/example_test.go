package tenant

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// TestShippedPlatform: the platform settings shipped in
// examples/cluster/platform.yaml give the root tenant's TenantGateway the
// namespaces Cozystack's platform values attach, so the routes the platform
// publishes from them, the TLSRoutes of every passthrough service included,
// are admitted by the publishing tenant's Gateway.
func TestShippedPlatform(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "examples", "cluster", "platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ec struct {
		Data map[string]any `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &ec); err != nil {
		t.Fatalf("cannot decode examples/cluster/platform.yaml: %v", err)
	}
	p, err := ParsePlatform(ec.Data)
	if err != nil {
		t.Fatalf("examples/cluster/platform.yaml: %v", err)
	}
	out, err := Derive(Input{Name: RootTenant, Parent: p.IngressName, Spec: appsv1alpha1.TenantSpec{Gateway: yes}, Platform: p})
	if err != nil {
		t.Fatalf("the root tenant of examples/cluster/platform.yaml is refused: %v", err)
	}
	var spec v1alpha1.TenantGatewaySpec
	for _, r := range out.Resources {
		if r.Key == KeyTenantGateway {
			b, _ := json.Marshal(manifest(t, r)["spec"])
			if err := json.Unmarshal(b, &spec); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Cozystack's platform values (gateway.attachedNamespaces): default holds
	// the Kubernetes API's TLSRoute, beside the kubernetes Service.
	want := []v1alpha1.DNSLabel{"cozy-cert-manager", "cozy-dashboard", "cozy-keycloak", "cozy-system", "cozy-harbor", "cozy-bucket",
		"cozy-kubevirt", "cozy-kubevirt-cdi", "cozy-monitoring", "cozy-linstor-gui", "default"}
	if diff := cmp.Diff(want, spec.AttachedNamespaces); diff != "" {
		t.Errorf("the root TenantGateway's attachedNamespaces are not Cozystack's list: -want, +got:\n%s", diff)
	}

	// Where the platform's charts put the TLSRoute of each passthrough
	// service.
	routeNamespace := map[v1alpha1.DNSLabel]v1alpha1.DNSLabel{"api": "default", "vm-exportproxy": "cozy-kubevirt", "cdi-uploadproxy": "cozy-kubevirt-cdi"}
	if diff := cmp.Diff([]v1alpha1.DNSLabel{"api", "vm-exportproxy", "cdi-uploadproxy"}, spec.TLSPassthroughServices); diff != "" {
		t.Errorf("the root TenantGateway's passthrough services: -want, +got:\n%s", diff)
	}
	attached := map[v1alpha1.DNSLabel]bool{}
	for _, ns := range spec.AttachedNamespaces {
		attached[ns] = true
	}
	for _, svc := range spec.TLSPassthroughServices {
		if ns := routeNamespace[svc]; !attached[ns] {
			t.Errorf("passthrough service %s is published, but %q, where its TLSRoute lives, is not attached: the route would not be admitted", svc, ns)
		}
	}
}
