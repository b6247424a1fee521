//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestIsolationHostnamelessRoute: alice, a child tenant, attaches an
// HTTPRoute without hostnames (applied as an administrator, so the L5
// policy that refuses it from tenants does not stop it: this test shows the
// listeners alone do). Each listener's namespace selector is evaluated by
// the API server itself, over the real namespaces: alice's namespace is
// admitted only by her own listener, never by bob's or the apex listeners,
// and the TenantGateway reports the route with the listeners it can reach.
// Envoy Gateway agrees: alice's route and bob's are Accepted, each attached
// to its own child listener only (beside the zone guard each child listener
// carries), and the route of the namespace delegated nothing is refused
// (NotAllowedByListeners).
func TestIsolationHostnamelessRoute(t *testing.T) {
	t.Parallel()
	tenantNamespaces(t, "tenant-iso", "iso.example", map[string]string{
		"tenant-iso-alice": "alice.iso.example",
		"tenant-iso-bob":   "bob.iso.example",
	})
	// Labelled for this Gateway but delegated nothing (no host label).
	namespace(t, "tenant-iso-nohost", map[string]string{"namespace.cozystack.io/gateway": "tenant-iso"})
	apply(t, `
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: tenant-iso
spec:
  apex: iso.example
  certMode: existingSecret
  wildcardSecretRef: {name: wildcard-iso-example}
  gatewayClassName: envoy
`)
	apply(t, httpRoute("tenant-iso-bob", "shop", "tenant-iso", "cozystack", "shop.bob.iso.example"))
	apply(t, httpRoute("tenant-iso-alice", "catch-all", "tenant-iso", "cozystack"))
	// A zone whose only route has no hostnames is Idle: alice routes a
	// name too, so her zone has its listener.
	apply(t, httpRoute("tenant-iso-alice", "www", "tenant-iso", "cozystack", "www.alice.iso.example"))
	apply(t, httpRoute("tenant-iso-nohost", "catch-all", "tenant-iso", "cozystack"))

	gw := waitGateway(t, "tenant-iso", "cozystack", "http, https, https-apex and one listener per child", func(ls []string, _ *unstructured.Unstructured) bool {
		return len(ls) == 5
	})

	// Which of the test's namespaces each listener admits, by the API
	// server's own label selector semantics.
	mine := []string{"tenant-iso", "tenant-iso-alice", "tenant-iso-bob", "tenant-iso-nohost"}
	admits := map[string][]string{}
	for _, l := range typedListeners(t, gw) {
		if l.Name == "http" {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(l.AllowedRoutes.Namespaces.Selector)
		if err != nil {
			t.Fatalf("listener %s: %v", l.Name, err)
		}
		for _, ns := range list(t, gvkNamespace, "", client.MatchingLabelsSelector{Selector: sel}) {
			if slices.Contains(mine, ns.GetName()) {
				admits[string(l.Name)] = append(admits[string(l.Name)], ns.GetName())
			}
		}
	}
	for name, got := range admits {
		var want []string
		switch {
		case name == "https" || name == "https-apex":
			want = []string{"tenant-iso"}
		case strings.HasPrefix(name, "https-child-alice-"):
			want = []string{"tenant-iso-alice"}
		case strings.HasPrefix(name, "https-child-bob-"):
			want = []string{"tenant-iso-bob"}
		}
		slices.Sort(got)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("listener %s admits namespaces %v, want %v", name, got, want)
		}
	}
	if len(admits) != 4 {
		t.Errorf("want every tenant listener to admit a namespace of this test, got %v", admits)
	}

	eventually(t, settle, "status.hostnamelessRoutes to list alice's route with only her listener, and the undelegated namespace's with none", func() (bool, string) {
		x := tgw(t, "tenant-iso", "cozystack")
		got := fmt.Sprint(slice(x, "status", "hostnamelessRoutes"))
		return got == fmt.Sprintf("[map[listeners:[%s] route:HTTPRoute/tenant-iso-alice/catch-all] map[route:HTTPRoute/tenant-iso-nohost/catch-all]]", childListener(gw, "alice")), got
	})

	eventually(t, settle, "Envoy Gateway: alice's and bob's routes Accepted on their own child listeners alone, the undelegated namespace's refused", func() (bool, string) {
		g, _ := get(t, gvkGateway, "tenant-iso", "cozystack")
		var got []string
		for _, r := range []struct{ ns, name string }{{"tenant-iso-alice", "catch-all"}, {"tenant-iso-bob", "shop"}, {"tenant-iso-nohost", "catch-all"}} {
			u, _ := get(t, gvkHTTPRoute, r.ns, r.name)
			got = append(got, r.ns+"="+routeAccepted(u, "tenant-iso", "cozystack"))
		}
		alice, bob := childListener(gw, "alice"), childListener(gw, "bob")
		for _, l := range []string{"http", "https", "https-apex", alice, bob} {
			got = append(got, fmt.Sprintf("%s:%v", l, gatewayListener(g, l)["attachedRoutes"]))
		}
		// http: the redirect route alone; alice's listener: her catch-all,
		// www and her zone guard; bob's: shop and his zone guard (see Zone
		// guards in docs/design.md).
		want := fmt.Sprintf("[tenant-iso-alice=True/Accepted tenant-iso-bob=True/Accepted tenant-iso-nohost=False/NotAllowedByListeners http:1 https:0 https-apex:0 %s:3 %s:2]", alice, bob)
		return fmt.Sprint(got) == want, fmt.Sprint(got)
	})
}

// childListener is the name of the child listener of a child label.
func childListener(gw *unstructured.Unstructured, label string) string {
	for _, l := range listeners(gw) {
		if name, _, _ := strings.Cut(l, "="); strings.HasPrefix(name, "https-child-"+label+"-") {
			return name
		}
	}
	return ""
}
