//go:build e2e

package e2e

import (
	"fmt"
	"testing"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

const (
	labelGateway    = "namespace.cozystack.io/gateway"
	annotAttachedBy = "cozystack.io/gateway-attached-by"
)

// TestNamespacePatches: attached namespaces get the gateway label and the
// attached-by annotation through provider-kubernetes Objects (applied as the
// provider's service account, with the example's RBAC); a namespace taken
// off the list loses both; a namespace the tenant layer labelled is never
// touched; labels we did not write stay.
func TestNamespacePatches(t *testing.T) {
	t.Parallel()
	namespace(t, "tenant-np", map[string]string{"namespace.cozystack.io/host": "np.example.org"})
	namespace(t, "np-apps", map[string]string{"team": "apps"})
	namespace(t, "np-db", nil)
	namespace(t, "np-tenant", map[string]string{labelGateway: "tenant-np", "namespace.cozystack.io/host": "np.example.org"})
	tgwYAML := func(attached string) string {
		return fmt.Sprintf(`
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: tenant-np
spec:
  apex: np.example.org
  attachedNamespaces: [%s]
`, attached)
	}
	apply(t, tgwYAML("np-apps, np-db, np-tenant"))

	for _, ns := range []string{"tenant-np", "np-apps", "np-db"} {
		eventually(t, oneTTL+settle, fmt.Sprintf("namespace %s labelled %s=tenant-np and annotated %s=tenant-np", ns, labelGateway, annotAttachedBy), func() (bool, string) {
			l, a, all := marks(t, ns)
			return l == "tenant-np" && a == "tenant-np", fmt.Sprintf("labels %v, annotation %q", all, a)
		})
	}
	if _, _, all := marks(t, "np-apps"); all["team"] != "apps" {
		t.Errorf("np-apps: the label team=apps, which the function did not write, was clobbered: %v", all)
	}
	eventually(t, settle, "the patch Objects of np-apps and np-db Ready and Synced", func() (bool, string) {
		for _, n := range []string{gateway.NamespaceObjectName("cozystack", "np-apps"), gateway.NamespaceObjectName("cozystack", "np-db")} {
			o, found := get(t, gvkNSObject, "tenant-np", n)
			if r, _, _ := condition(o, "Ready"); !found || r != "True" {
				return false, show(o)
			}
			if s, _, _ := condition(o, "Synced"); s != "True" {
				return false, show(o)
			}
		}
		return true, ""
	})
	if o, found := get(t, gvkNSObject, "tenant-np", gateway.NamespaceObjectName("cozystack", "np-tenant")); found {
		t.Errorf("np-tenant is labelled by the tenant layer: want no Object for it, got %s", show(o))
	}
	if _, a, all := marks(t, "np-tenant"); a != "" || all[labelGateway] != "tenant-np" {
		t.Errorf("np-tenant was touched: labels %v, annotation %q", all, a)
	}

	apply(t, tgwYAML("np-apps, np-tenant"))
	eventually(t, oneTTL+settle, "np-db, taken off attachedNamespaces, without the label and the annotation", func() (bool, string) {
		l, a, all := marks(t, "np-db")
		return l == "" && a == "", fmt.Sprintf("labels %v, annotation %q", all, a)
	})
	eventually(t, oneTTL+settle, "the patch Object of np-db gone once the marks are off", func() (bool, string) {
		o, found := get(t, gvkNSObject, "tenant-np", gateway.NamespaceObjectName("cozystack", "np-db"))
		return !found, show(o)
	})
	if l, a, _ := marks(t, "np-apps"); l != "tenant-np" || a != "tenant-np" {
		t.Errorf("np-apps, still attached, lost its marks: label %q annotation %q", l, a)
	}
	if _, a, all := marks(t, "np-tenant"); a != "" || all[labelGateway] != "tenant-np" {
		t.Errorf("np-tenant was touched: labels %v, annotation %q", all, a)
	}
}

// TestForeignGateway: a Gateway that already exists at the derived name and
// is not the TenantGateway's stays untouched, the TenantGateway says so, and
// everything else is still composed.
func TestForeignGateway(t *testing.T) {
	t.Parallel()
	tenantNamespaces(t, "tenant-fg", "example.org", nil)
	apply(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: cozystack
  namespace: tenant-fg
  labels: {owner: someone-else}
spec:
  gatewayClassName: cilium
  listeners:
  - name: web
    port: 8080
    protocol: HTTP
`)
	before, _ := get(t, gvkGateway, "tenant-fg", "cozystack")
	apply(t, `
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: tenant-fg
spec:
  apex: example.org
`)
	want := "Gateway tenant-fg/cozystack exists but is not owned by TenantGateway cozystack; refusing to take over (delete it manually if you want the function to manage it)"
	eventually(t, oneTTL+settle, "GatewayReady=False ReconcileError: "+want, func() (bool, string) {
		s, r, m := condition(tgw(t, "tenant-fg", "cozystack"), "GatewayReady")
		return s == "False" && r == "ReconcileError" && m == want, fmt.Sprintf("%s %s %q", s, r, m)
	})
	eventually(t, settle, "the Issuer and the redirect route composed all the same", func() (bool, string) {
		_, i := get(t, gvkIssuer, "tenant-fg", "cozystack-gateway")
		_, r := get(t, gvkHTTPRoute, "tenant-fg", "cozystack-http-redirect")
		return i && r, fmt.Sprintf("issuer %v, redirect %v", i, r)
	})
	// cert-manager's part, played: the Issuer Ready. Everything composed is
	// ready, yet the TenantGateway is not: the Gateway it needs is refused,
	// and a Warning event says so.
	iss, _ := get(t, gvkIssuer, "tenant-fg", "cozystack-gateway")
	readyStatus(t, iss)
	eventually(t, settle, "the Issuer ready, the TenantGateway still Ready=False, and a Warning naming the refused Gateway", func() (bool, string) {
		x := tgw(t, "tenant-fg", "cozystack")
		ready, reason, _ := condition(x, "Ready")
		if ok, saw := warningOn(t, "tenant-fg", "TenantGateway", "cozystack", want); !ok {
			return false, "no Warning: " + saw
		}
		return ready == "False" && reason == "Creating", fmt.Sprintf("Ready %s %s", ready, reason)
	})
	eventually(t, settle, "kubectl get tgw prints GATEWAY ReconcileError, READY False", func() (bool, string) {
		cols, err := printed(t, "/apis/gateway.cozystack.io/v1alpha1/namespaces/tenant-fg/tenantgateways/cozystack")
		if err != nil {
			return false, err.Error()
		}
		return cols["GATEWAY"] == "ReconcileError" && cols["READY"] == "False", fmt.Sprint(cols)
	})
	after, _ := get(t, gvkGateway, "tenant-fg", "cozystack")
	if after.GetResourceVersion() != before.GetResourceVersion() || len(after.GetOwnerReferences()) != 0 {
		t.Errorf("the foreign Gateway was modified: before %s, after %s (owners %v)", before.GetResourceVersion(), after.GetResourceVersion(), after.GetOwnerReferences())
	}
}
