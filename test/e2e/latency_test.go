//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRouteAcceptedLatency measures what a tenant waits for: the time from
// creating an HTTPRoute to Envoy Gateway reporting it Accepted on the
// listener the function composes for its hostname. That spans the function
// (which sees a new route within its TTL), Crossplane applying the Gateway,
// and Envoy Gateway. Twelve routes are created 1.5 s apart, so they fall at
// different points of the TTL. The test asserts counts only (every route
// Accepted, each the only route attached to the listener of its hostname)
// and logs the latencies; the README records them.
func TestRouteAcceptedLatency(t *testing.T) {
	t.Parallel()
	const routes = 12
	tenantNamespaces(t, "tenant-lat", "lat.example", nil)
	namespace(t, "tenant-lat-apps", map[string]string{"namespace.cozystack.io/host": "lat.example", "namespace.cozystack.io/gateway": "tenant-lat"})
	apply(t, `
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: tenant-lat
spec:
  apex: lat.example
  gatewayClassName: envoy
`)
	eventually(t, oneTTL+settle, "Gateway tenant-lat/cozystack Accepted by Envoy Gateway", func() (bool, string) {
		gw, _ := get(t, gvkGateway, "tenant-lat", "cozystack")
		s, r, _ := condition(gw, "Accepted")
		return s == "True", fmt.Sprintf("%s %s", s, r)
	})

	created := map[string]time.Time{}
	for i := range routes {
		name := fmt.Sprintf("r%02d", i)
		apply(t, httpRoute("tenant-lat-apps", name, "tenant-lat", "cozystack", name+".lat.example"))
		created[name] = time.Now()
		time.Sleep(1500 * time.Millisecond)
	}

	latency := map[string]time.Duration{}
	deadline := time.Now().Add(5 * time.Minute)
	for len(latency) < routes {
		gw, _ := get(t, gvkGateway, "tenant-lat", "cozystack")
		for name := range created {
			if _, done := latency[name]; done {
				continue
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
	ds := make([]time.Duration, 0, routes)
	for _, d := range latency {
		ds = append(ds, d)
	}
	slices.Sort(ds)
	ttl := os.Getenv("FUNCTION_TTL")
	if ttl == "" {
		ttl = "10s" // up.sh's default
	}
	for i := range ds {
		ds[i] = ds[i].Round(100 * time.Millisecond)
	}
	t.Logf("HTTPRoute created -> Accepted by Envoy Gateway on its listener, %d routes, function --ttl=%s: p50 %s, max %s (sorted: %v)",
		routes, ttl, ds[len(ds)/2], ds[len(ds)-1], ds)
}

// attachedAlone reports whether the Gateway has a listener for hostname and
// Envoy Gateway counts exactly one route attached to it.
func attachedAlone(gw *unstructured.Unstructured, hostname string) bool {
	for _, l := range slice(gw, "spec", "listeners") {
		if m, _ := l.(map[string]any); m["hostname"] == hostname {
			return fmt.Sprint(gatewayListener(gw, m["name"].(string))["attachedRoutes"]) == "1"
		}
	}
	return false
}
