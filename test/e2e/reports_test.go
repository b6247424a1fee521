//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// TestRouteReports: a child tenant's administrator, bound by
// examples/cluster/tenant-roles.yaml in its own namespace only, cannot read
// the owner's TenantGateway, but reads in its own namespace why each of its
// routes is not served (docs/design.md, Route reports): the ConfigMap
// <tgw>-route-status that provider-kubernetes writes there. Everything is
// done as that tenant (impersonated); its served route is not listed, and
// the report goes once nothing of it is refused.
func TestRouteReports(t *testing.T) {
	t.Parallel()
	// The shipped role under a name of this test's: TestTenantAdminRole,
	// running beside it, deletes the shipped one when it ends.
	role := readFile("examples", "cluster", "tenant-roles.yaml")
	if !strings.Contains(role, "name: tenant-gateway-tenant-admin\n") {
		t.Fatal("examples/cluster/tenant-roles.yaml holds no ClusterRole tenant-gateway-tenant-admin")
	}
	apply(t, strings.Replace(role, "name: tenant-gateway-tenant-admin\n", "name: e2e-rr-tenant-admin\n", 1))
	namespace(t, "tenant-rr", map[string]string{"namespace.cozystack.io/host": "rr.example.org", labelGateway: "tenant-rr"})
	namespace(t, "tenant-rr-alice", map[string]string{"namespace.cozystack.io/host": "alice.rr.example.org", labelGateway: "tenant-rr"})
	apply(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: rr-alice-admins, namespace: tenant-rr-alice}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-rr-tenant-admin}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: rr-alice-admins}
---
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata: {name: cozystack, namespace: tenant-rr}
spec:
  apex: rr.example.org
  gatewayClassName: cilium
`)
	alice := as(t, "alice@rr.example.org", "rr-alice-admins", "system:authenticated")
	routes := map[string]client.Object{}
	for name, host := range map[string]string{"www": "www.alice.rr.example.org", "wild": "*.alice.rr.example.org"} {
		objs, err := decode(fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %s, namespace: tenant-rr-alice}
spec:
  parentRefs: [{name: cozystack, namespace: tenant-rr}]
  hostnames: [%q]
`, name, host))
		if err != nil {
			t.Fatal(err)
		}
		if err := alice.Create(t.Context(), objs[0]); err != nil {
			t.Fatalf("the tenant cannot create its route %s: %v", name, err)
		}
		routes[name] = objs[0]
		t.Cleanup(func() { _ = k8s.Delete(context.Background(), objs[0]) })
	}
	name := gateway.ReportName("cozystack")
	eventually(t, oneTTL+settle, "the tenant reads ConfigMap tenant-rr-alice/"+name+" with HTTPRoute.wild Invalid, and no HTTPRoute.www", func() (bool, string) {
		cm := &corev1.ConfigMap{}
		if err := alice.Get(t.Context(), client.ObjectKey{Namespace: "tenant-rr-alice", Name: name}, cm); err != nil {
			return false, err.Error()
		}
		_, www := cm.Data["HTTPRoute.www"]
		return strings.HasPrefix(cm.Data["HTTPRoute.wild"], "*.alice.rr.example.org: Invalid: ") && !www && cm.Data[gateway.KeyReportSummary] != "", fmt.Sprint(cm.Data)
	})
	tgw := &corev1.ConfigMap{}
	if err := alice.Get(t.Context(), client.ObjectKey{Namespace: "tenant-rr", Name: name}, tgw); !kerrors.IsForbidden(err) {
		t.Errorf("the tenant reads a ConfigMap of the owner's namespace: want Forbidden, got %v", err)
	}
	if err := alice.Delete(t.Context(), routes["wild"]); err != nil {
		t.Fatalf("the tenant cannot delete its route wild: %v", err)
	}
	eventually(t, oneTTL+settle, "the report gone once every route of tenant-rr-alice is served", func() (bool, string) {
		cm := &corev1.ConfigMap{}
		err := alice.Get(t.Context(), client.ObjectKey{Namespace: "tenant-rr-alice", Name: name}, cm)
		return kerrors.IsNotFound(err), fmt.Sprintf("%v %v", err, cm.Data)
	})
}
