package envoy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// Attacks on zone guards judged by Envoy Gateway's translator on an edge
// Gateway, where every listener shares port 80's route table.

// aliceBranch is the owner, the publisher, alice with n nested tenants of
// her own routing one name each, and her nested bob and his carol.
func aliceBranch(n int) ([]gateway.Namespace, []gateway.Route) {
	nss := []gateway.Namespace{
		tenantNS("tenant-root", "example.org"), tenantNS("cozy-dashboard", ""),
		tenantNS("tenant-alice", "alice.example.org"), tenantNS("tenant-alice-bob", "bob.alice.example.org"),
		tenantNS("tenant-alice-bob-carol", "carol.bob.alice.example.org"),
	}
	var routes []gateway.Route
	for i := range n {
		ns := fmt.Sprintf("tenant-alice-f%02d", i)
		nss = append(nss, tenantNS(ns, fmt.Sprintf("f%02d.alice.example.org", i)))
		routes = append(routes, tenantRoute(ns, "www", fmt.Sprintf("www.f%02d.alice.example.org", i)))
	}
	return nss, routes
}

// TestAttackEnvoyLosersListedTwice: alice's branch fills the
// budget, then carol (no listener) wins shop.carol.bob.alice.example.org
// over bob and alice, whose listeners both list it: Envoy would refuse the
// port-80 table.
func TestAttackEnvoyLosersListedTwice(t *testing.T) {
	nss, routes := aliceBranch(gateway.MaxListeners - 4)
	routes = append(routes,
		tenantRoute("tenant-alice", "www", "www.alice.example.org"),
		tenantRoute("tenant-alice-bob", "www", "www.bob.alice.example.org"),
	)
	first, _ := composeScenario(t, gateway.Input{Spec: edgeSpec, Namespaces: nss, Routes: routes})
	routes = append(routes,
		tenantRoute("tenant-alice-bob-carol", "shop", "shop.carol.bob.alice.example.org"),
		tenantRoute("tenant-alice-bob", "shop", "shop.carol.bob.alice.example.org"),
		tenantRoute("tenant-alice", "shop", "shop.carol.bob.alice.example.org"),
	)
	_, s := composeScenario(t, gateway.Input{Spec: edgeSpec, Namespaces: nss, Routes: routes, Observed: observedGateway(first)})
	if d := duplicateDomains(translateScenario(t, s)); len(d) > 0 {
		t.Errorf("Envoy would refuse the port-80 route table: %s", strings.Join(d, "; "))
	}
}

// TestEnvoyZoneGuardOffItsListenerLeavesTheZone: bob's wildcard into
// carol's zone, with no place for its pin, keeps tenant-alice-bob off bob's
// listener, his guard with it, and alice's wildcard answers his zone.
func TestEnvoyZoneGuardOffItsListenerLeavesTheZone(t *testing.T) {
	nss, routes := aliceBranch(gateway.MaxListeners - 5)
	routes = append(routes,
		tenantRoute("tenant-alice", "all", "*.alice.example.org"),
		tenantRoute("tenant-alice-bob", "www", "www.bob.alice.example.org"),
		tenantRoute("tenant-alice-bob-carol", "www", "www.carol.bob.alice.example.org"),
	)
	first, _ := composeScenario(t, gateway.Input{Spec: edgeSpec, Namespaces: nss, Routes: routes})
	routes = append(routes, tenantRoute("tenant-alice-bob", "reach", "*.x.carol.bob.alice.example.org"))
	_, s := composeScenario(t, gateway.Input{Spec: edgeSpec, Namespaces: nss, Routes: routes, Observed: observedGateway(first)})
	// The documented limit: with bob's guard kept off his listener his
	// zone falls through to alice's wildcard.
	if b, err := translateScenario(t, s).Backends(80, "login.bob.alice.example.org"); err != nil || len(b) != 1 || b[0] != "tenant-alice/all:80" {
		t.Errorf("login.bob.alice.example.org, in bob's zone, goes to %v (%v), want tenant-alice/all:80 (the documented limit)", b, err)
	}
}

// TestAttackEnvoyGuardBesideChildWildcard (held): bob's own
// *.bob.alice.example.org route shares the guard's virtual host on his
// listener and answers his zone (the guard's one exact path shadows
// nothing else); alice's wildcard and bob's guard list nothing twice.
func TestAttackEnvoyGuardBesideChildWildcard(t *testing.T) {
	nss, _ := aliceBranch(0)
	_, s := composeScenario(t, gateway.Input{Spec: edgeSpec, Namespaces: nss, Routes: []gateway.Route{
		tenantRoute("tenant-alice", "all", "*.alice.example.org"),
		tenantRoute("tenant-alice-bob", "all", "*.bob.alice.example.org"),
		tenantRoute("tenant-alice-bob-carol", "www", "www.carol.bob.alice.example.org"),
	}})
	r := translateScenario(t, s)
	if d := duplicateDomains(r); len(d) > 0 {
		t.Errorf("Envoy would refuse the port-80 route table: %s", strings.Join(d, "; "))
	}
	for h, want := range map[string]string{
		"login.bob.alice.example.org":     "tenant-alice-bob/all:80",
		"a.b.bob.alice.example.org":       "tenant-alice-bob/all:80",
		"login.alice.example.org":         "tenant-alice/all:80",
		"www.carol.bob.alice.example.org": "tenant-alice-bob-carol/www:80",
	} {
		if b, err := r.Backends(80, h); err != nil || len(b) != 1 || b[0] != want {
			t.Errorf("%s goes to %v (%v), want %s", h, b, err, want)
		}
	}
	if b, err := r.Backends(80, "login.carol.bob.alice.example.org"); err == nil {
		t.Errorf("login.carol.bob.alice.example.org, in carol's zone, goes to %v", b)
	}
}
