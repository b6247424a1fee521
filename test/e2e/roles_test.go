//go:build e2e

package e2e

import (
	"strings"
	"testing"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestTenantAdminRole: the ClusterRole examples/cluster/tenant-roles.yaml
// gives a tenant's administrators, bound in their namespace as the file
// says, lets them write routes and nested Tenants and read their
// TenantGateway, and nothing of the platform's: on the real API server's
// RBAC, creating a TenantGateway is forbidden, and nothing is granted in
// another tenant's namespace. Writes are server-side dry runs.
func TestTenantAdminRole(t *testing.T) {
	t.Parallel()
	apply(t, readFile("examples", "cluster", "tenant-roles.yaml"))
	namespace(t, "tenant-role", map[string]string{"namespace.cozystack.io/host": "role.example.org", labelGateway: "tenant-role"})
	namespace(t, "tenant-role-other", map[string]string{"namespace.cozystack.io/host": "other.example.org", labelGateway: "tenant-role-other"})
	apply(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: role-admins, namespace: tenant-role}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: tenant-gateway-tenant-admin}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: role-admins}
`)
	bob := as(t, "bob@example.com", "role-admins", "system:authenticated")
	dryRun := func(doc string) error {
		objs, err := decode(doc)
		if err != nil {
			t.Fatal(err)
		}
		return bob.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(objs[0]), client.FieldOwner(fieldOwner), client.DryRunAll)
	}
	route := func(ns, host string) string {
		return "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: app, namespace: " + ns + "}\nspec:\n  parentRefs: [{name: cozystack, port: 443}]\n  hostnames: [" + host + "]\n"
	}
	allowed := map[string]string{
		"an HTTPRoute in its namespace": route("tenant-role", "shop.role.example.org"),
		"a nested Tenant":               "apiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata: {name: shop, namespace: tenant-role}\nspec: {}\n",
	}
	for what, doc := range allowed {
		// RBAC is in force at once, but the policies are applied by TestMain
		// and awaited there, so a refusal here is the role's.
		if err := dryRun(doc); err != nil {
			t.Errorf("the tenant admin role must allow %s: %v", what, err)
		}
	}
	forbidden := map[string]string{
		"a TenantGateway": "apiVersion: gateway.cozystack.io/v1alpha1\nkind: TenantGateway\nmetadata: {name: cozystack, namespace: tenant-role}\nspec: {apex: role.example.org}\n",
		"a Gateway":       "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: own, namespace: tenant-role}\nspec:\n  gatewayClassName: cilium\n  listeners: [{name: http, port: 80, protocol: HTTP, hostname: role.example.org}]\n",
		"a Certificate":   "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: own, namespace: tenant-role}\nspec: {secretName: own, dnsNames: [role.example.org], issuerRef: {name: cozystack-gateway}}\n",
		"an HTTPRoute in another tenant's namespace": route("tenant-role-other", "shop.other.example.org"),
	}
	for what, doc := range forbidden {
		if err := dryRun(doc); !kerrors.IsForbidden(err) {
			t.Errorf("the tenant admin role must not allow %s: want Forbidden, got %v", what, err)
		}
	}
	for ns, want := range map[string]bool{"tenant-role": true, "tenant-role-other": false} {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(schema.GroupVersionKind{Group: "gateway.cozystack.io", Version: "v1alpha1", Kind: "TenantGatewayList"})
		err := bob.List(t.Context(), l, client.InNamespace(ns))
		switch {
		case want && err != nil:
			t.Errorf("the tenant admin role must let it read the TenantGateways of %s: %v", ns, err)
		case !want && !kerrors.IsForbidden(err):
			t.Errorf("the tenant admin role must not let it read the TenantGateways of %s: want Forbidden, got %v", ns, err)
		case err != nil && !strings.Contains(err.Error(), "tenantgateways"):
			t.Errorf("unexpected refusal: %v", err)
		}
	}
}
