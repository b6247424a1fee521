//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// TestDeletionGarbageCollects: deleting a TenantGateway removes everything
// it composed: the Gateway, the Issuer, the Certificates, the redirect route
// and the namespace patch Objects (Kubernetes garbage collection through the
// owner references; kube-controller-manager runs). The namespaces
// themselves stay: the patch Objects may observe and update them, never
// delete them.
func TestDeletionGarbageCollects(t *testing.T) {
	t.Parallel()
	namespace(t, "tenant-gc", map[string]string{"namespace.cozystack.io/host": "example.org"})
	namespace(t, "gc-apps", nil)
	xr := `
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: tenant-gc
spec:
  apex: example.org
  attachedNamespaces: [gc-apps]
`
	apply(t, xr)
	apply(t, httpRoute("gc-apps", "www", "tenant-gc", "cozystack", "www.example.org"))
	waitGateway(t, "tenant-gc", "cozystack", "the www listener", func(ls []string, _ *unstructured.Unstructured) bool {
		return slices.Contains(ls, "https-www-8a59b0a3=www.example.org")
	})
	type ref struct{ kind, name string }
	composed := []ref{
		{"Gateway", "cozystack"}, {"Issuer", "cozystack-gateway"}, {"Certificate", "cozystack-www-8a59b0a3-tls"},
		{"HTTPRoute", "cozystack-http-redirect"}, {"Object", gateway.NamespaceObjectName("cozystack", "gc-apps")}, {"Object", gateway.NamespaceObjectName("cozystack", "tenant-gc")},
	}
	gvks := map[string]schema.GroupVersionKind{"Gateway": gvkGateway, "Issuer": gvkIssuer, "Certificate": gvkCertificate, "HTTPRoute": gvkHTTPRoute, "Object": gvkNSObject}
	present := func() []string {
		var out []string
		for _, r := range composed {
			if _, found := get(t, gvks[r.kind], "tenant-gc", r.name); found {
				out = append(out, r.kind+"/"+r.name)
			}
		}
		return out
	}
	eventually(t, oneTTL+settle, "every composed resource present", func() (bool, string) {
		p := present()
		return len(p) == len(composed), fmt.Sprintf("present: %v", p)
	})
	eventually(t, oneTTL+settle, "gc-apps labelled by the TenantGateway", func() (bool, string) {
		l, a, _ := marks(t, "gc-apps")
		return l == "tenant-gc" && a == "tenant-gc", fmt.Sprintf("label %q annotation %q", l, a)
	})

	remove(t, xr)
	eventually(t, settle, "the TenantGateway and everything it composed gone", func() (bool, string) {
		_, x := get(t, gvkTenantGateway, "tenant-gc", "cozystack")
		p := present()
		return !x && len(p) == 0, fmt.Sprintf("TenantGateway present %v; still present: %v", x, p)
	})
	for _, ns := range []string{"gc-apps", "tenant-gc"} {
		if _, found := get(t, gvkNamespace, "", ns); !found {
			t.Errorf("namespace %s was deleted with the TenantGateway; the patch Objects must never delete namespaces", ns)
		}
		// Crossplane runs no function when an XR is deleted, and the patch
		// Objects may not delete, so the marks stay (docs/operations.md,
		// Uninstall, "What stays behind"). The attached-by annotation tells the next
		// TenantGateway in tenant-gc that they are its own to release.
		l, a, _ := marks(t, ns)
		t.Logf("namespace %s after deletion: label %q, annotation %q", ns, l, a)
	}
}
