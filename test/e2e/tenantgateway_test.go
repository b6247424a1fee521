//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// TestHTTP01RouteBecomesListener: a TenantGateway becomes a Gateway, an
// Issuer and a redirect route the API server accepts (with the real Gateway
// API and cert-manager CRDs and the admission policies in place); an
// HTTPRoute added in an attached namespace becomes a listener and a
// Certificate within one TTL, and removing it removes both. The names are
// the ones TestNames pins (fn/gateway/names_test.go). Envoy Gateway accepts the route on
// its listener and refuses the one from a namespace of another Gateway.
func TestHTTP01RouteBecomesListener(t *testing.T) {
	t.Parallel()
	tenantNamespaces(t, "tenant-foo", "foo.example.com", nil)
	namespace(t, "tenant-foo-apps", map[string]string{"namespace.cozystack.io/host": "foo.example.com", "namespace.cozystack.io/gateway": "tenant-foo"})
	// Another tenant's namespace, not admitted to this Gateway.
	namespace(t, "tenant-foo-other", map[string]string{"namespace.cozystack.io/host": "foo.example.com", "namespace.cozystack.io/gateway": "tenant-elsewhere"})
	apply(t, envoyTenantGateway("tenant-foo", "foo.example.com"))
	waitGateway(t, "tenant-foo", "cozystack", "Gateway tenant-foo/cozystack with only the http listener", func(ls []string, _ *unstructured.Unstructured) bool {
		return len(ls) == 1 && ls[0] == "http="
	})
	eventually(t, settle, "Issuer cozystack-gateway and HTTPRoute cozystack-http-redirect in tenant-foo", func() (bool, string) {
		iss, okI := get(t, gvkIssuer, "tenant-foo", "cozystack-gateway")
		rd, okR := get(t, gvkHTTPRoute, "tenant-foo", "cozystack-http-redirect")
		return okI && okR, fmt.Sprintf("issuer: %s; redirect: %s", show(iss), show(rd))
	})
	iss, _ := get(t, gvkIssuer, "tenant-foo", "cozystack-gateway")
	if got := slice(iss, "spec", "acme", "solvers"); len(got) != 1 {
		t.Errorf("Issuer cozystack-gateway: want one HTTP-01 solver, got %v", got)
	}

	route := httpRoute("tenant-foo-apps", "harbor", "tenant-foo", "cozystack", "harbor.foo.example.com")
	apply(t, route)
	apply(t, httpRoute("tenant-foo-other", "intruder", "tenant-foo", "cozystack", "intruder.foo.example.com"))
	waitGateway(t, "tenant-foo", "cozystack", "listener https-harbor-760d5a8a for harbor.foo.example.com, none for the route of a namespace not admitted", func(ls []string, _ *unstructured.Unstructured) bool {
		return fmt.Sprint(ls) == "[http= https-harbor-760d5a8a=harbor.foo.example.com]"
	})
	eventually(t, settle, "Certificate cozystack-harbor-760d5a8a-tls for harbor.foo.example.com", func() (bool, string) {
		c, found := get(t, gvkCertificate, "tenant-foo", "cozystack-harbor-760d5a8a-tls")
		names := slice(c, "spec", "dnsNames")
		return found && fmt.Sprint(names) == "[harbor.foo.example.com]", show(c)
	})
	eventually(t, settle, "Envoy Gateway: harbor Accepted on https-harbor-760d5a8a, the route of the namespace not admitted refused", func() (bool, string) {
		g, _ := get(t, gvkGateway, "tenant-foo", "cozystack")
		h, _ := get(t, gvkHTTPRoute, "tenant-foo-apps", "harbor")
		i, _ := get(t, gvkHTTPRoute, "tenant-foo-other", "intruder")
		ha, ia := routeAccepted(h, "tenant-foo", "cozystack"), routeAccepted(i, "tenant-foo", "cozystack")
		attached := gatewayListener(g, "https-harbor-760d5a8a")["attachedRoutes"]
		return ha == "True/Accepted" && ia == "False/NotAllowedByListeners" && fmt.Sprint(attached) == "1",
			fmt.Sprintf("harbor %s, intruder %s, https-harbor-760d5a8a attachedRoutes %v", ha, ia, attached)
	})
	eventually(t, settle, "status.listeners to report https-harbor-760d5a8a NotProgrammed (Envoy Gateway refuses it until cert-manager, which does not run here, writes its Secret)", func() (bool, string) {
		m := listenerState(t, "tenant-foo", "cozystack", "https-harbor-760d5a8a")
		return m["reason"] == "NotProgrammed" && m["certificateName"] == "cozystack-harbor-760d5a8a-tls", fmt.Sprint(m)
	})

	remove(t, route)
	waitGateway(t, "tenant-foo", "cozystack", "the harbor listener gone once its route is deleted", func(ls []string, _ *unstructured.Unstructured) bool {
		return len(ls) == 1 && ls[0] == "http="
	})
	eventually(t, settle, "Certificate cozystack-harbor-760d5a8a-tls deleted", func() (bool, string) {
		c, found := get(t, gvkCertificate, "tenant-foo", "cozystack-harbor-760d5a8a-tls")
		return !found, show(c)
	})
}

// TestDNS01Children: dns01 with two inheriting child namespaces gives one
// wildcard Certificate for the apex and both child apexes, the fixed
// https/https-apex listeners and one https-child listener per child (names
// as fn/gateway/names_test.go pins them).
func TestDNS01Children(t *testing.T) {
	t.Parallel()
	tenantNamespaces(t, "tenant-dns", "example.org", map[string]string{
		"tenant-dns-alice": "alice.example.org",
		"tenant-dns-bob":   "bob.example.org",
	})
	apply(t, `
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: tenant-dns
spec:
  apex: example.org
  certMode: dns01
  issuerName: letsencrypt-stage
  dns01:
    provider: cloudflare
    cloudflare:
      apiTokenSecretRef: {name: cloudflare-api-token, key: api-token}
`)
	// A child zone no route uses is Idle: each child routes a name.
	apply(t, httpRoute("tenant-dns-alice", "www", "tenant-dns", "cozystack", "www.alice.example.org"))
	apply(t, httpRoute("tenant-dns-bob", "www", "tenant-dns", "cozystack", "www.bob.example.org"))
	want := []string{"http=", "https=*.example.org", "https-apex=example.org",
		"https-child-alice-cf290f3a=*.alice.example.org", "https-child-bob-116343d5=*.bob.example.org"}
	waitGateway(t, "tenant-dns", "cozystack", fmt.Sprintf("listeners %v", want), func(ls []string, _ *unstructured.Unstructured) bool {
		return fmt.Sprint(ls) == fmt.Sprint(want)
	})
	eventually(t, settle, "wildcard Certificate cozystack-gateway-tls for the apex and both children", func() (bool, string) {
		c, _ := get(t, gvkCertificate, "tenant-dns", "cozystack-gateway-tls")
		return fmt.Sprint(slice(c, "spec", "dnsNames")) == "[example.org *.example.org alice.example.org *.alice.example.org bob.example.org *.bob.example.org]", show(c)
	})
	eventually(t, settle, "Issuer cozystack-gateway with a Cloudflare DNS-01 solver", func() (bool, string) {
		iss, _ := get(t, gvkIssuer, "tenant-dns", "cozystack-gateway")
		solvers := slice(iss, "spec", "acme", "solvers")
		return len(solvers) == 1 && strings.Contains(fmt.Sprint(solvers), "cloudflare"), show(iss)
	})
}

// TestExistingSecret: existingSecret serves the apex and children from the
// operator's wildcard Secret: no Issuer, no Certificate.
func TestExistingSecret(t *testing.T) {
	t.Parallel()
	tenantNamespaces(t, "tenant-ws", "example.org", map[string]string{"tenant-ws-alice": "alice.example.org"})
	apply(t, `
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: tenant-ws
spec:
  apex: example.org
  certMode: existingSecret
  wildcardSecretRef: {name: wildcard-example-org}
`)
	apply(t, httpRoute("tenant-ws-alice", "www", "tenant-ws", "cozystack", "www.alice.example.org"))
	gw := waitGateway(t, "tenant-ws", "cozystack", "https, https-apex and the alice child listener", func(ls []string, _ *unstructured.Unstructured) bool {
		return fmt.Sprint(ls) == "[http= https=*.example.org https-apex=example.org https-child-alice-cf290f3a=*.alice.example.org]"
	})
	for _, l := range slice(gw, "spec", "listeners")[1:] {
		if refs := fmt.Sprint(l.(map[string]any)["tls"]); !strings.Contains(refs, "wildcard-example-org") {
			t.Errorf("listener %v: want certificateRefs to name the Secret wildcard-example-org, got %s", l.(map[string]any)["name"], refs)
		}
	}
	eventually(t, settle, "no Issuer and no Certificate in tenant-ws", func() (bool, string) {
		is, cs := list(t, gvkIssuer, "tenant-ws"), list(t, gvkCertificate, "tenant-ws")
		return len(is) == 0 && len(cs) == 0, fmt.Sprintf("%d issuers, %d certificates", len(is), len(cs))
	})
}

// TestEdge: edge mode, for a class whose TLS ends in front of the cluster:
// plain-HTTP listeners for the apex and the children, no Issuer, no
// Certificate, no redirect.
func TestEdge(t *testing.T) {
	t.Parallel()
	tenantNamespaces(t, "tenant-edge", "example.org", map[string]string{"tenant-edge-alice": "alice.example.org"})
	apply(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: edge-tunnel
spec:
  controllerName: example.com/edge-tunnel
---
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: tenant-edge
spec:
  apex: example.org
  certMode: edge
  gatewayClassName: edge-tunnel
`)
	apply(t, httpRoute("tenant-edge-alice", "www", "tenant-edge", "cozystack", "www.alice.example.org"))
	edge := regexp.MustCompile(`^edge=\*\.example\.org edge-apex=example\.org edge-child-alice-cf290f3a=\*\.alice\.example\.org$`)
	gw := waitGateway(t, "tenant-edge", "cozystack", "edge, edge-apex and edge-child-alice listeners", func(ls []string, _ *unstructured.Unstructured) bool {
		return edge.MatchString(strings.Join(ls, " "))
	})
	for _, l := range slice(gw, "spec", "listeners") {
		m := l.(map[string]any)
		if m["protocol"] != "HTTP" || fmt.Sprint(m["port"]) != "80" || m["tls"] != nil {
			t.Errorf("edge listener %v: want 80/HTTP without tls, got %v", m["name"], m)
		}
	}
	eventually(t, settle, "no Issuer, Certificate or redirect route in tenant-edge", func() (bool, string) {
		is, cs := list(t, gvkIssuer, "tenant-edge"), list(t, gvkCertificate, "tenant-edge")
		_, rd := get(t, gvkHTTPRoute, "tenant-edge", "cozystack-http-redirect")
		return len(is) == 0 && len(cs) == 0 && !rd, fmt.Sprintf("%d issuers, %d certificates, redirect %v", len(is), len(cs), rd)
	})
	// alice's zone guard (docs/design.md, Zone guards): written by
	// provider-kubernetes into her namespace under its RBAC and the
	// route policy, attached to her listener alone.
	guardObject := gateway.ZoneGuardObjectName("cozystack", "tenant-edge-alice")
	eventually(t, settle, "alice's zone guard written and its Object ready", func() (bool, string) {
		o, ok := get(t, gvkNSObject, "tenant-edge", guardObject)
		if !ok {
			return false, "no Object " + guardObject
		}
		if st, reason, msg := condition(o, "Ready"); st != "True" {
			return false, fmt.Sprintf("Object %s Ready=%s %s %s", guardObject, st, reason, msg)
		}
		r, ok := get(t, gvkHTTPRoute, "tenant-edge-alice", "cozystack-zone-guard")
		if !ok {
			return false, "no HTTPRoute tenant-edge-alice/cozystack-zone-guard"
		}
		spec := fmt.Sprint(r.Object["spec"])
		return strings.Contains(spec, "*.alice.example.org") && strings.Contains(spec, "sectionName:edge-child-alice-cf290f3a"), spec
	})
}

// TestConflictEnforced: two namespaces claim one hostname; the winner's
// namespace (smallest namespace/name) alone is admitted by the hostname's
// listener, and the TenantGateway reports the loser. Envoy Gateway judges
// the Gateway: the winner's route is Accepted and the only route attached to
// the hostname's listener, the loser's is refused (NotAllowedByListeners).
func TestConflictEnforced(t *testing.T) {
	t.Parallel()
	tenantNamespaces(t, "tenant-cf", "example.org", nil)
	for _, ns := range []string{"tenant-cf-a", "tenant-cf-b"} {
		namespace(t, ns, map[string]string{"namespace.cozystack.io/host": "example.org", "namespace.cozystack.io/gateway": "tenant-cf"})
	}
	apply(t, envoyTenantGateway("tenant-cf", "example.org"))
	apply(t, httpRoute("tenant-cf-a", "shop", "tenant-cf", "cozystack", "shop.example.org"))
	apply(t, httpRoute("tenant-cf-b", "shop", "tenant-cf", "cozystack", "shop.example.org"))
	gw := waitGateway(t, "tenant-cf", "cozystack", "a listener for shop.example.org", func(ls []string, _ *unstructured.Unstructured) bool {
		return len(ls) == 2 && strings.HasSuffix(ls[1], "=shop.example.org")
	})
	l := slice(gw, "spec", "listeners")[1].(map[string]any)
	sel := fmt.Sprint(l["allowedRoutes"])
	if !strings.Contains(sel, "kubernetes.io/metadata.name:tenant-cf-a") {
		t.Errorf("listener %v: want allowedRoutes to admit only namespace tenant-cf-a (the winner), got %s", l["name"], sel)
	}
	eventually(t, settle, "RoutesAccepted=False HostnameConflict naming the losing route", func() (bool, string) {
		x := tgw(t, "tenant-cf", "cozystack")
		s, r, m := condition(x, "RoutesAccepted")
		conflicts := fmt.Sprint(slice(x, "status", "conflicts"))
		return s == "False" && r == "HostnameConflict" && strings.Contains(m, "tenant-cf-b/shop") &&
			strings.Contains(conflicts, "HTTPRoute/tenant-cf-a/shop"), fmt.Sprintf("%s %s %q conflicts=%s", s, r, m, conflicts)
	})
	shop := l["name"].(string)
	eventually(t, settle, "Envoy Gateway: tenant-cf-a/shop Accepted, alone on "+shop+"; tenant-cf-b/shop NotAllowedByListeners", func() (bool, string) {
		g, _ := get(t, gvkGateway, "tenant-cf", "cozystack")
		a, _ := get(t, gvkHTTPRoute, "tenant-cf-a", "shop")
		b, _ := get(t, gvkHTTPRoute, "tenant-cf-b", "shop")
		wa, wb := routeAccepted(a, "tenant-cf", "cozystack"), routeAccepted(b, "tenant-cf", "cozystack")
		attached := gatewayListener(g, shop)["attachedRoutes"]
		return wa == "True/Accepted" && wb == "False/NotAllowedByListeners" && fmt.Sprint(attached) == "1",
			fmt.Sprintf("winner %s, loser %s, %s attachedRoutes %v", wa, wb, shop, attached)
	})
}

// TestModeChange: moving a TenantGateway from http01 to dns01 replaces the
// per-hostname listeners and Certificates by the wildcard ones; Crossplane
// deletes what the new mode no longer composes.
func TestModeChange(t *testing.T) {
	t.Parallel()
	tenantNamespaces(t, "tenant-mc", "example.org", nil)
	xr := func(mode string) string {
		return fmt.Sprintf(`
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: tenant-mc
spec:
  apex: example.org
  certMode: %s
  dns01:
    provider: cloudflare
    cloudflare:
      apiTokenSecretRef: {name: cloudflare-api-token, key: api-token}
`, mode)
	}
	apply(t, xr("http01"))
	apply(t, httpRoute("tenant-mc", "www", "tenant-mc", "cozystack", "www.example.org"))
	waitGateway(t, "tenant-mc", "cozystack", "http01: listeners http and https-www-8a59b0a3", func(ls []string, _ *unstructured.Unstructured) bool {
		return fmt.Sprint(ls) == "[http= https-www-8a59b0a3=www.example.org]"
	})
	eventually(t, settle, "http01: Certificate cozystack-www-8a59b0a3-tls", func() (bool, string) {
		_, found := get(t, gvkCertificate, "tenant-mc", "cozystack-www-8a59b0a3-tls")
		return found, fmt.Sprint(list(t, gvkCertificate, "tenant-mc"))
	})

	apply(t, xr("dns01"))
	waitGateway(t, "tenant-mc", "cozystack", "dns01: listeners http, https and https-apex", func(ls []string, _ *unstructured.Unstructured) bool {
		return fmt.Sprint(ls) == "[http= https=*.example.org https-apex=example.org]"
	})
	eventually(t, settle, "dns01: only the wildcard Certificate cozystack-gateway-tls left", func() (bool, string) {
		var names []string
		for _, c := range list(t, gvkCertificate, "tenant-mc") {
			names = append(names, c.GetName())
		}
		return fmt.Sprint(names) == "[cozystack-gateway-tls]", fmt.Sprint(names)
	})
	eventually(t, settle, "status.hostnames: www.example.org Covered by the wildcard listener", func() (bool, string) {
		hs := fmt.Sprint(slice(tgw(t, "tenant-mc", "cozystack"), "status", "hostnames"))
		return strings.Contains(hs, "hostname:www.example.org") && strings.Contains(hs, "state:Covered"), hs
	})
}

// TestPassthrough: TLS passthrough services get a tls-<svc> listener; a
// TLSRoute (v1, which the real API server serves here, so the function's
// schema check picks it) for <svc>.<apex> is reported Passthrough and gets
// no HTTPS listener or Certificate; a GatewayClass whose controller lists
// its features without TLSRoute makes GatewayReady say so.
func TestPassthrough(t *testing.T) {
	t.Parallel()
	tenantNamespaces(t, "tenant-pt", "example.org", nil)
	apply(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: envoy-lite
spec:
  controllerName: example.com/envoy-lite
---
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: tenant-pt
spec:
  apex: example.org
  gatewayClassName: envoy-lite
  tlsPassthroughServices: [api]
`+apiTLSRoute("tenant-pt"))
	gw := waitGateway(t, "tenant-pt", "cozystack", "listeners http and tls-api", func(ls []string, _ *unstructured.Unstructured) bool {
		return fmt.Sprint(ls) == "[http= tls-api=api.example.org]"
	})
	l := slice(gw, "spec", "listeners")[1].(map[string]any)
	if l["protocol"] != "TLS" || fmt.Sprint(l["port"]) != "443" || !strings.Contains(fmt.Sprint(l["tls"]), "mode:Passthrough") {
		t.Errorf("listener tls-api: want 443/TLS in Passthrough mode, got %v", l)
	}
	eventually(t, oneTTL+settle, "status.hostnames: api.example.org Passthrough, and no Certificate", func() (bool, string) {
		hs := fmt.Sprint(slice(tgw(t, "tenant-pt", "cozystack"), "status", "hostnames"))
		cs := list(t, gvkCertificate, "tenant-pt")
		return strings.Contains(hs, "hostname:api.example.org") && strings.Contains(hs, "state:Passthrough") && len(cs) == 0,
			fmt.Sprintf("hostnames %s, %d certificates", hs, len(cs))
	})

	// The class's controller reports what it supports, TLSRoute not among it.
	statusApply(t, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
		"metadata": map[string]any{"name": "envoy-lite"},
		"status": map[string]any{
			"conditions": []any{map[string]any{
				"type": "Accepted", "status": "True", "reason": "Accepted", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": int64(1),
			}},
			"supportedFeatures": []any{map[string]any{"name": "Gateway"}, map[string]any{"name": "HTTPRoute"}},
		},
	}})
	want := "GatewayClass envoy-lite lists its supported features but not TLSRoute, so nothing would serve the TLS passthrough listeners of Gateway tenant-pt/cozystack"
	eventually(t, oneTTL+settle, "GatewayReady=False GatewayClassUnsupported: "+want, func() (bool, string) {
		s, r, m := condition(tgw(t, "tenant-pt", "cozystack"), "GatewayReady")
		return s == "False" && r == "GatewayClassUnsupported" && m == want, fmt.Sprintf("%s %s %q", s, r, m)
	})
}

// TestPassthroughEnvoyGateway: on Envoy Gateway's class the passthrough
// listener tls-api is Programmed with the TLSRoute for api.<apex> Accepted
// on it, its only route, and the TenantGateway reports the listener ready.
func TestPassthroughEnvoyGateway(t *testing.T) {
	t.Parallel()
	tenantNamespaces(t, "tenant-pte", "example.org", nil)
	apply(t, envoyTenantGateway("tenant-pte", "example.org")+"  tlsPassthroughServices: [api]\n"+apiTLSRoute("tenant-pte"))
	waitGateway(t, "tenant-pte", "cozystack", "listeners http and tls-api", func(ls []string, _ *unstructured.Unstructured) bool {
		return fmt.Sprint(ls) == "[http= tls-api=api.example.org]"
	})
	eventually(t, settle, "Envoy Gateway: tls-api Programmed with TLSRoute api Accepted on it, the TenantGateway's listener ready", func() (bool, string) {
		gw, _ := get(t, gvkGateway, "tenant-pte", "cozystack")
		rt, _ := get(t, gvkTLSRoute, "tenant-pte", "api")
		l, a := listenerConds(gw, "tls-api"), routeAccepted(rt, "tenant-pte", "cozystack")
		st := listenerState(t, "tenant-pte", "cozystack", "tls-api")
		return l == "Accepted=True/Accepted Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs attached=1" && a == "True/Accepted" && st["ready"] == true,
			fmt.Sprintf("tls-api: %s; TLSRoute api Accepted=%s; status.listeners %v", l, a, st)
	})
}

// apiTLSRoute is a TLSRoute for api.example.org on the listener tls-api of
// the Gateway cozystack in ns.
func apiTLSRoute(ns string) string {
	return fmt.Sprintf(`---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata:
  name: api
  namespace: %s
spec:
  parentRefs: [{name: cozystack, sectionName: tls-api}]
  hostnames: [api.example.org]
  rules: [{backendRefs: [{name: api, port: 443}]}]
`, ns)
}
