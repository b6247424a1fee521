package envoy

import (
	"fmt"
	"slices"
	"testing"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	tgwv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// Issue 21's attacks that need several runs, judged by Envoy Gateway's
// translator on the Gateway of the last run: each run is fed the Gateway the
// one before composed, as Crossplane's observed state would be.

// observe is the observed Gateway an Output's Gateway becomes.
func observe(out *gateway.Output) map[string]*kube.ObservedResource {
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

// judgeTables fails on what the Judge finds in the tables Envoy shares: a
// route table that lists a domain twice, or two filter chains of one server
// name (Envoy refuses either whole). Status is not judged here: the
// scenario carries none.
func judgeTables(t *testing.T, s *Scenario, r *Result, mode tgwv1alpha1.CertMode) {
	t.Helper()
	s.TenantGateway = &tgwv1alpha1.TenantGateway{Status: tgwv1alpha1.TenantGatewayStatus{CertMode: mode}}
	v, err := Judge(s, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range v.Disagreements {
		if d.Check == CheckRouteTable || d.Check == CheckFilterChains {
			t.Errorf("%s %s: %s", d.Check, d.Subject, d.Detail)
		}
	}
	if v.Judged[CheckRouteTable] == 0 {
		t.Errorf("no route table judged")
	}
}

// wantBackends checks where a request for host goes on a Gateway port.
func wantBackends(t *testing.T, r *Result, port int32, host string, want ...string) {
	t.Helper()
	got, err := r.Backends(port, host)
	if len(want) == 0 {
		if err == nil && len(got) > 0 {
			t.Errorf("%s on port %d goes to %v, want no backend", host, port, got)
		}
		return
	}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("%s on port %d goes to %v (%v), want %v", host, port, got, err, want)
	}
}

// TestAttackEnvoyFullBudget is attack 1's second way in and attack 2's
// second: alice's nested tenants fill the listeners, then alice claims the
// name her nested tenant bob routes, and routes a wildcard in the zone of
// her nested tenant zed, who has no listener. The pin the contest needs is
// made whatever the budget says, so port 80's one table lists bob's name
// once, and it goes to bob; alice's wildcard answers none of zed's names.
// One scenario for both: a Gateway of 64 listeners is the translator's
// slowest case.
func TestAttackEnvoyFullBudget(t *testing.T) {
	spec := tgwv1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: tgwv1alpha1.CertModeEdge}
	nss := []gateway.Namespace{tenantNS("tenant-root", "example.org"), tenantNS("tenant-alice", "alice.example.org"), tenantNS("tenant-alice-bob", "bob.alice.example.org")}
	routes := []gateway.Route{tenantRoute("tenant-alice-bob", "own", "a.bob.alice.example.org")}
	for i := range gateway.MaxListeners - 2 {
		ns := fmt.Sprintf("tenant-alice-e%02d", i)
		nss = append(nss, tenantNS(ns, fmt.Sprintf("e%02d.alice.example.org", i)))
		routes = append(routes, tenantRoute(ns, "r", fmt.Sprintf("www.e%02d.alice.example.org", i)))
	}
	first, _ := composeScenario(t, gateway.Input{Spec: spec, Namespaces: nss, Routes: routes})
	nss = append(nss, tenantNS("tenant-alice-zed", "zed.alice.example.org"))
	routes = append(routes,
		tenantRoute("tenant-alice", "grab", "a.bob.alice.example.org"),
		tenantRoute("tenant-alice", "reach", "*.zed.alice.example.org"),
		tenantRoute("tenant-alice-zed", "shop", "shop.zed.alice.example.org"),
	)
	second, _ := composeScenario(t, gateway.Input{Spec: spec, Namespaces: nss, Routes: routes, Observed: observe(first)})
	_, s := composeScenario(t, gateway.Input{Spec: spec, Namespaces: nss, Routes: routes, Observed: observe(second)})
	r := translateScenario(t, s)
	judgeTables(t, s, r, spec.CertMode)
	wantBackends(t, r, 80, "a.bob.alice.example.org", "tenant-alice-bob/own:80")
	for _, h := range []string{"shop.zed.alice.example.org", "login.zed.alice.example.org"} {
		if b, err := r.Backends(80, h); err == nil && slices.Contains(b, "tenant-alice/reach:80") {
			t.Errorf("%s, in zed's zone, goes to alice's wildcard: %v", h, b)
		}
	}
}

// TestAttackEnvoyEmptyNestedTenantsHoardTheBudgets is attack 4: 70 nested
// tenants of alice with no route, then a top-level tenant carol with one.
// Carol's name is served: an empty zone holds no listener ahead of it.
func TestAttackEnvoyEmptyNestedTenantsHoardTheBudgets(t *testing.T) {
	for _, mode := range []tgwv1alpha1.CertMode{tgwv1alpha1.CertModeEdge, tgwv1alpha1.CertModeExistingSecret} {
		t.Run(string(mode), func(t *testing.T) {
			spec := tgwv1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: mode}
			port := int32(80)
			if mode == tgwv1alpha1.CertModeExistingSecret {
				spec.WildcardSecretRef = &tgwv1alpha1.LocalSecretReference{Name: "wildcard"}
				port = 443
			}
			nss := []gateway.Namespace{tenantNS("tenant-root", "example.org"), tenantNS("tenant-alice", "alice.example.org")}
			for i := range 70 {
				nss = append(nss, tenantNS(fmt.Sprintf("tenant-alice-e%02d", i), fmt.Sprintf("e%02d.alice.example.org", i)))
			}
			first, _ := composeScenario(t, gateway.Input{Spec: spec, Namespaces: nss})
			nss = append(nss, tenantNS("tenant-carol", "carol.example.org"))
			_, s := composeScenario(t, gateway.Input{Spec: spec, Namespaces: nss, Routes: []gateway.Route{tenantRoute("tenant-carol", "shop", "shop.carol.example.org")}, Observed: observe(first)})
			r := translateScenario(t, s)
			judgeTables(t, s, r, mode)
			wantBackends(t, r, port, "shop.carol.example.org", "tenant-carol/shop:80")
		})
	}
}
