package envoy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// The findings of the fifth attack review (fn/gateway/review5_test.go)
// judged by Envoy Gateway's translator on an edge Gateway, where every
// listener shares port 80's route table. Findings run with
// REVIEW_FINDINGS=1; what held runs always.

// review5Branch is the owner, the publisher, alice with n nested tenants of
// her own routing one name each, and her nested bob and his carol.
func review5Branch(n int) ([]gateway.Namespace, []gateway.Route) {
	nss := []gateway.Namespace{
		reviewNS("tenant-root", "example.org"), reviewNS("cozy-dashboard", ""),
		reviewNS("tenant-alice", "alice.example.org"), reviewNS("tenant-alice-bob", "bob.alice.example.org"),
		reviewNS("tenant-alice-bob-carol", "carol.bob.alice.example.org"),
	}
	var routes []gateway.Route
	for i := range n {
		ns := fmt.Sprintf("tenant-alice-f%02d", i)
		nss = append(nss, reviewNS(ns, fmt.Sprintf("f%02d.alice.example.org", i)))
		routes = append(routes, reviewRoute(ns, "www", fmt.Sprintf("www.f%02d.alice.example.org", i)))
	}
	return nss, routes
}

// TestReview5EnvoyLosersListedTwice is finding 1: alice's branch fills the
// budget, then carol (no listener) wins shop.carol.bob.alice.example.org
// over bob and alice, whose listeners both list it: Envoy would refuse the
// port-80 table.
func TestReview5EnvoyLosersListedTwice(t *testing.T) {
	reviewFinding(t, "finding 1 of the fifth review, judged by Envoy Gateway")
	nss, routes := review5Branch(gateway.MaxListeners - 4)
	routes = append(routes,
		reviewRoute("tenant-alice", "www", "www.alice.example.org"),
		reviewRoute("tenant-alice-bob", "www", "www.bob.alice.example.org"),
	)
	first, _ := reviewCompose(t, gateway.Input{Spec: review4Edge, Namespaces: nss, Routes: routes})
	routes = append(routes,
		reviewRoute("tenant-alice-bob-carol", "shop", "shop.carol.bob.alice.example.org"),
		reviewRoute("tenant-alice-bob", "shop", "shop.carol.bob.alice.example.org"),
		reviewRoute("tenant-alice", "shop", "shop.carol.bob.alice.example.org"),
	)
	_, s := reviewCompose(t, gateway.Input{Spec: review4Edge, Namespaces: nss, Routes: routes, Observed: observedGateway(first)})
	if d := duplicateDomains(reviewTranslate(t, s)); len(d) > 0 {
		t.Errorf("Envoy would refuse the port-80 route table: %s", strings.Join(d, "; "))
	}
}

// TestReview5EnvoyGuardOffItsListener is finding 2: bob's wildcard into
// carol's zone, with no place for its pin, keeps tenant-alice-bob off bob's
// listener, his guard with it, and alice's wildcard answers his zone.
func TestReview5EnvoyGuardOffItsListener(t *testing.T) {
	reviewFinding(t, "finding 2 of the fifth review, judged by Envoy Gateway")
	nss, routes := review5Branch(gateway.MaxListeners - 5)
	routes = append(routes,
		reviewRoute("tenant-alice", "all", "*.alice.example.org"),
		reviewRoute("tenant-alice-bob", "www", "www.bob.alice.example.org"),
		reviewRoute("tenant-alice-bob-carol", "www", "www.carol.bob.alice.example.org"),
	)
	first, _ := reviewCompose(t, gateway.Input{Spec: review4Edge, Namespaces: nss, Routes: routes})
	routes = append(routes, reviewRoute("tenant-alice-bob", "reach", "*.x.carol.bob.alice.example.org"))
	_, s := reviewCompose(t, gateway.Input{Spec: review4Edge, Namespaces: nss, Routes: routes, Observed: observedGateway(first)})
	if b, err := reviewTranslate(t, s).Backends(80, "login.bob.alice.example.org"); err == nil {
		t.Errorf("login.bob.alice.example.org, in bob's zone, goes to %v", b)
	}
}

// TestReview5EnvoyGuardBesideChildWildcard (held): bob's own
// *.bob.alice.example.org route shares the guard's virtual host on his
// listener and answers his zone (the guard's one exact path shadows
// nothing else); alice's wildcard and bob's guard list nothing twice.
func TestReview5EnvoyGuardBesideChildWildcard(t *testing.T) {
	nss, _ := review5Branch(0)
	_, s := reviewCompose(t, gateway.Input{Spec: review4Edge, Namespaces: nss, Routes: []gateway.Route{
		reviewRoute("tenant-alice", "all", "*.alice.example.org"),
		reviewRoute("tenant-alice-bob", "all", "*.bob.alice.example.org"),
		reviewRoute("tenant-alice-bob-carol", "www", "www.carol.bob.alice.example.org"),
	}})
	r := reviewTranslate(t, s)
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
