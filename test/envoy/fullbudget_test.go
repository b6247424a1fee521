package envoy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	tgwv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
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
	obs := &kube.ObservedResource{ListenerHostnames: map[string]string{}}
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
		Observed: map[string]*kube.ObservedResource{gateway.KeyGateway: obs}})
	if b, err := translateScenario(t, s).Backends(80, "www.example.org"); err != nil || len(b) != 1 || b[0] != "tenant-root/www:80" {
		t.Errorf("after the publisher routed a.apps.example.org, www.example.org goes to %v (%v)", b, err)
	}
}

// observedGateway is the Gateway of out as the next run observes it.
func observedGateway(out *gateway.Output) map[string]*kube.ObservedResource {
	obs := &kube.ObservedResource{ListenerHostnames: map[string]string{}}
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
	return map[string]*kube.ObservedResource{gateway.KeyGateway: obs}
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

// contestedFillers are n names the owner and the publisher both route,
// which the publisher wins: each takes a pin, so they fill n places of the
// budget with two route namespaces (the translator runs once per group of
// namespaces the listeners admit alike, so fillers of a namespace each would
// make it run once per filler).
func contestedFillers(n int) []gateway.Route {
	var routes []gateway.Route
	for i := range n {
		h := fmt.Sprintf("c%02d.example.org", i)
		routes = append(routes, tenantRoute("tenant-root", "c"+h[1:3], h), tenantRoute("cozy-dashboard", "c"+h[1:3], h))
	}
	return routes
}

// TestAttackEnvoyDomainListedTwiceThroughAWildcardPin: the winner of a
// contested wildcard (a publisher that won *.apps.example.org from the
// owner; alice's nested tenant bob, given her host, that won
// *.apps.alice.example.org from her) names its wildcard pin for a name
// under it, and under a full budget the loser routes that name. Envoy
// Gateway's port-80 table must list the name once; before the function
// counted a wildcard pin as a listener that may take the names under it, it
// listed the name under the pin and under the loser's wider listener, and
// Envoy refused the table whole.
func TestAttackEnvoyDomainListedTwiceThroughAWildcardPin(t *testing.T) {
	for _, c := range []struct {
		name           string
		namespaces     []gateway.Namespace
		wildcard, host string
		winner, loser  string
		// places the contest takes: its pin, and the zone's listener
		places int
	}{
		{"publisher", nil, "*.apps.example.org", "a.apps.example.org", "cozy-dashboard", "tenant-root", 1},
		{"nested-tenant", []gateway.Namespace{tenantNS("tenant-alice", "alice.example.org"), tenantNS("tenant-alice-bob", "alice.example.org")}, "*.apps.alice.example.org", "www.apps.alice.example.org", "tenant-alice-bob", "tenant-alice", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			nss := append([]gateway.Namespace{tenantNS("tenant-root", "example.org"), tenantNS("cozy-dashboard", "")}, c.namespaces...)
			routes := append(contestedFillers(gateway.MaxListeners-2-c.places), tenantRoute(c.winner, "wild", c.wildcard), tenantRoute(c.loser, "wild", c.wildcard))
			first, _ := composeScenario(t, gateway.Input{Spec: edgeSpec, Namespaces: nss, Routes: routes})
			pin := "edge-" + gateway.HostKey(c.wildcard)
			if !slices.Contains(observedGateway(first)[gateway.KeyGateway].ListenerNames, pin) {
				t.Fatalf("the contest of %s made no pin %s", c.wildcard, pin)
			}
			grab := tenantRoute(c.winner, "grab", c.host)
			grab.ParentRefs[0].SectionName = pin
			routes = append(routes, grab)
			second, _ := composeScenario(t, gateway.Input{Spec: edgeSpec, Namespaces: nss, Routes: routes, Observed: observedGateway(first)})
			routes = append(routes, tenantRoute(c.loser, "own", c.host))
			_, s := composeScenario(t, gateway.Input{Spec: edgeSpec, Namespaces: nss, Routes: routes, Observed: observedGateway(second)})
			if d := duplicateDomains(translateScenario(t, s)); len(d) > 0 {
				t.Errorf("Envoy would refuse the port-80 route table: %s", strings.Join(d, "; "))
			}
		})
	}
}
