package envoy

import (
	"fmt"
	"strings"
	"testing"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	tgwv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// Attacks under a full listener budget judged by Envoy Gateway's translator
// on an edge Gateway, where every listener shares port 80's route table.

var edgeSpec = tgwv1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: tgwv1alpha1.CertModeEdge, AttachedNamespaces: []tgwv1alpha1.DNSLabel{"cozy-dashboard"}}

// topFillers are the owner, the publisher and n top-level tenants with
// one route each, which fill n of the edge Gateway's 62 places.
func topFillers(n int) ([]gateway.Namespace, []gateway.Route) {
	nss := []gateway.Namespace{tenantNS("tenant-root", "example.org"), tenantNS("cozy-dashboard", "")}
	var routes []gateway.Route
	for i := range n {
		ns := fmt.Sprintf("tenant-f%02d", i)
		nss = append(nss, tenantNS(ns, fmt.Sprintf("f%02d.example.org", i)))
		routes = append(routes, tenantRoute(ns, "www", fmt.Sprintf("www.f%02d.example.org", i)))
	}
	return nss, routes
}

// chainOfPins is the contest of *.apps.example.org that the publisher
// wins, its *.b.apps and c.b.apps under the pin, and the owner's www.
func chainOfPins() []gateway.Route {
	return []gateway.Route{
		tenantRoute("tenant-root", "apps", "*.apps.example.org"),
		tenantRoute("tenant-root", "www", "www.example.org"),
		tenantRoute("cozy-dashboard", "apps", "*.apps.example.org"),
		tenantRoute("cozy-dashboard", "b", "*.b.apps.example.org"),
		tenantRoute("cozy-dashboard", "c", "c.b.apps.example.org"),
	}
}

// TestAttackEnvoyChainedPinsHalfKept:
// with two places free
// the *.apps pin is kept and the two pins under it are not; Envoy Gateway
// lists *.b.apps and c.b.apps under two virtual hosts of the port-80
// table. With three free (every pin kept) it lists none twice.
func TestAttackEnvoyChainedPinsHalfKept(t *testing.T) {
	for _, free := range []int{3, 2} {
		t.Run(fmt.Sprintf("%d-free", free), func(t *testing.T) {
			nss, routes := topFillers(gateway.MaxListeners - 2 - free)
			_, s := composeScenario(t, gateway.Input{Spec: edgeSpec, Namespaces: nss, Routes: append(routes, chainOfPins()...)})
			if d := duplicateDomains(translateScenario(t, s)); len(d) > 0 {
				t.Errorf("Envoy would refuse the port-80 route table: %s", strings.Join(d, "; "))
			}
		})
	}
}

// TestAttackEnvoyOwnerOffEdge: the
// publisher's new name
// under its served wildcard pin, under a full budget, leaves the owner's
// uncontested www.example.org without a route on port 80.
func TestAttackEnvoyOwnerOffEdge(t *testing.T) {
	nss, routes := topFillers(gateway.MaxListeners - 3)
	routes = append(routes,
		tenantRoute("tenant-root", "www", "www.example.org"),
		tenantRoute("tenant-root", "apps", "*.apps.example.org"),
		tenantRoute("cozy-dashboard", "apps", "*.apps.example.org"),
	)
	first, s := composeScenario(t, gateway.Input{Spec: edgeSpec, Namespaces: nss, Routes: routes})
	if b, err := translateScenario(t, s).Backends(80, "www.example.org"); err != nil || len(b) != 1 || b[0] != "tenant-root/www:80" {
		t.Fatalf("before the attack www.example.org goes to %v (%v)", b, err)
	}
	obs := &gateway.ObservedResource{ListenerHostnames: map[string]string{}}
	for _, r := range first.Resources {
		if gw, ok := r.Object.(*gwapiv1.Gateway); ok {
			for _, l := range gw.Spec.Listeners {
				obs.ListenerNames = append(obs.ListenerNames, string(l.Name))
				if l.Hostname != nil {
					obs.ListenerHostnames[string(l.Name)] = string(*l.Hostname)
				}
			}
		}
	}
	_, s = composeScenario(t, gateway.Input{Spec: edgeSpec, Namespaces: nss, Routes: append(routes, tenantRoute("cozy-dashboard", "a", "a.apps.example.org")),
		Observed: map[string]*gateway.ObservedResource{gateway.KeyGateway: obs}})
	if b, err := translateScenario(t, s).Backends(80, "www.example.org"); err != nil || len(b) != 1 || b[0] != "tenant-root/www:80" {
		t.Errorf("after the publisher routed a.apps.example.org, www.example.org goes to %v (%v)", b, err)
	}
}

// observedGateway is the Gateway of out as the next run observes it.
func observedGateway(out *gateway.Output) map[string]*gateway.ObservedResource {
	obs := &gateway.ObservedResource{ListenerHostnames: map[string]string{}}
	for _, r := range out.Resources {
		if gw, ok := r.Object.(*gwapiv1.Gateway); ok {
			for _, l := range gw.Spec.Listeners {
				obs.ListenerNames = append(obs.ListenerNames, string(l.Name))
				if l.Hostname != nil {
					obs.ListenerHostnames[string(l.Name)] = string(*l.Hostname)
				}
			}
		}
	}
	return map[string]*gateway.ObservedResource{gateway.KeyGateway: obs}
}

// TestEnvoyChildContestUnderAFullBudgetKeepsItsParentOff: under a full budget
// bob claims the name alice routes in his zone; alice's own
// www.alice.example.org then has no route on port 80.
func TestEnvoyChildContestUnderAFullBudgetKeepsItsParentOff(t *testing.T) {
	nss, routes := topFillers(gateway.MaxListeners - 4)
	nss = append(nss, tenantNS("tenant-alice", "alice.example.org"), tenantNS("tenant-alice-bob", "bob.alice.example.org"))
	routes = append(routes,
		tenantRoute("tenant-alice", "www", "www.alice.example.org"),
		tenantRoute("tenant-alice-bob", "www", "www.bob.alice.example.org"),
	)
	first, _ := composeScenario(t, gateway.Input{Spec: edgeSpec, Namespaces: nss, Routes: routes})
	routes = append(routes, tenantRoute("tenant-alice", "shop", "shop.bob.alice.example.org"))
	second, _ := composeScenario(t, gateway.Input{Spec: edgeSpec, Namespaces: nss, Routes: routes, Observed: observedGateway(first)})
	routes = append(routes, tenantRoute("tenant-alice-bob", "shop", "shop.bob.alice.example.org"))
	_, s := composeScenario(t, gateway.Input{Spec: edgeSpec, Namespaces: nss, Routes: routes, Observed: observedGateway(second)})
	// The documented limit: alice is kept off her listener while the
	// pin has no place (her status says so), so her name has no route.
	if b, err := translateScenario(t, s).Backends(80, "www.alice.example.org"); err == nil {
		t.Errorf("after bob claimed shop.bob.alice.example.org, www.alice.example.org goes to %v; the documented limit keeps alice off her listener", b)
	}
}
