//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRouteAcceptedLatency measures what a tenant waits for: the time from
// creating an HTTPRoute to Envoy Gateway reporting it Accepted on the
// listener the function composes for its hostname. That spans the function
// (which sees a new route within its TTL), Crossplane applying the Gateway,
// and Envoy Gateway. Twelve routes are created 1.5 s apart, so they fall at
// different points of the TTL. Every route must be Accepted, the only route
// attached to the listener of its hostname; its listener must reach the
// Gateway within oneTTL (the function's TTL and Crossplane's queueing, as
// TestCallsPerRouteChange bounds a change) and Envoy Gateway accept it
// within settle after that. The quantiles are logged.
func TestRouteAcceptedLatency(t *testing.T) {
	t.Parallel()
	const routes = 12
	tenantNamespaces(t, "tenant-lat", "lat.example", nil)
	namespace(t, "tenant-lat-apps", map[string]string{"namespace.cozystack.io/host": "lat.example", "namespace.cozystack.io/gateway": "tenant-lat"})
	apply(t, envoyTenantGateway("tenant-lat", "lat.example"))
	eventually(t, oneTTL+settle, "Gateway tenant-lat/cozystack Accepted by Envoy Gateway", func() (bool, string) {
		gw, _ := get(t, gvkGateway, "tenant-lat", "cozystack")
		s, r, _ := condition(gw, "Accepted")
		return s == "True", fmt.Sprintf("%s %s", s, r)
	})

	// Routes are created while the loop polls, every 250 ms: latency is
	// creation to Accepted; listed, creation to the listener in the
	// Gateway's spec (the function and Crossplane's part; the rest is Envoy
	// Gateway's).
	created := map[string]time.Time{}
	latency, listed := map[string]time.Duration{}, map[string]time.Duration{}
	deadline, next := time.Now().Add(5*time.Minute), time.Now()
	for len(latency) < routes {
		if n := len(created); n < routes && !time.Now().Before(next) {
			name := fmt.Sprintf("r%02d", n)
			apply(t, httpRoute("tenant-lat-apps", name, "tenant-lat", "cozystack", name+".lat.example"))
			created[name], next = time.Now(), next.Add(1500*time.Millisecond)
		}
		gw, _ := get(t, gvkGateway, "tenant-lat", "cozystack")
		for name := range created {
			if _, done := latency[name]; done {
				continue
			}
			if _, seen := listed[name]; !seen && listenerFor(gw, name+".lat.example") != "" {
				listed[name] = time.Since(created[name])
			}
			rt, _ := get(t, gvkHTTPRoute, "tenant-lat-apps", name)
			if routeAccepted(rt, "tenant-lat", "cozystack") == "True/Accepted" && attachedAlone(gw, name+".lat.example") {
				latency[name] = time.Since(created[name])
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5m, %d of %d routes Accepted alone on the listener of their hostname: %v; Gateway listeners %v", len(latency), routes, latency, listeners(gw))
		}
		time.Sleep(250 * time.Millisecond)
	}
	ttl := os.Getenv("FUNCTION_TTL")
	if ttl == "" {
		ttl = "10s" // up.sh's default
	}
	egPart := map[string]time.Duration{}
	for name, d := range latency {
		egPart[name] = d - listed[name]
		if listed[name] > oneTTL {
			t.Errorf("route %s: its listener reached the Gateway after %s, more than one TTL and Crossplane's queueing (%s)", name, listed[name].Round(100*time.Millisecond), oneTTL)
		}
		if egPart[name] > settle {
			t.Errorf("route %s: Accepted %s after its listener reached the Gateway, more than %s", name, egPart[name].Round(100*time.Millisecond), settle)
		}
	}
	t.Logf("%d HTTPRoutes, function --ttl=%s, %s: created -> Accepted by Envoy Gateway on its listener %s; created -> listener in the Gateway %s; listener -> Accepted %s",
		routes, ttl, crossplaneSettings(), quantiles(latency), quantiles(listed), quantiles(egPart))
}

// attachedAlone reports whether the Gateway has a listener for hostname and
// Envoy Gateway counts exactly one route attached to it.
func attachedAlone(gw *unstructured.Unstructured, hostname string) bool {
	name := listenerFor(gw, hostname)
	return name != "" && fmt.Sprint(gatewayListener(gw, name)["attachedRoutes"]) == "1"
}
