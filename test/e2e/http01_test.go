//go:build e2e

package e2e

import (
	"crypto/x509"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/test/envoy"
)

// astray is a name of webZone that BIND resolves away from the Gateway
// (tls.sh): nothing answers there, as when a platform's DNS points a
// tenant's name elsewhere, so its HTTP-01 challenge cannot pass.
const astray = "astray." + webZone

// http01TenantGateway is a TenantGateway in http01 mode on Envoy Gateway's
// class in webNamespace, issued by Pebble.
func http01TenantGateway(t *testing.T) string {
	t.Helper()
	ca := strings.TrimSuffix(string(tlsRun(t, "pki", "pebble-ca.crt")), "\n")
	return fmt.Sprintf(`
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: %s
spec:
  apex: %s
  gatewayClassName: envoy
  certMode: http01
  issuerName: pebble
  acme:
    server: %s
    caBundle: |
      %s
`, webNamespace, webZone, pebbleDirectory, strings.ReplaceAll(ca, "\n", "\n      "))
}

// TestHTTP01Issuance: a TenantGateway in http01 mode gets a certificate
// for each hostname issued for real through HTTP-01. cert-manager's Gateway
// API solver creates its challenge HTTPRoute, Service and Pod on the
// Gateway's http listener; Envoy Gateway's controller accepts the route
// there, and its translator, given the live Gateway and routes, routes
// /.well-known/acme-challenge/<token> on port 80 to the solver's Service,
// ahead of the redirect route and the host's own route, which match /. The solver Pod runs as a
// process (solver_test.go) and Pebble validates through the played data
// plane at the Gateway's address; the Certificate turns Ready, its Secret
// verifies against Pebble's root, Envoy Gateway programs the hostname's
// listener with it and the TenantGateway reports it ready. The same for a
// new route hostname of a child tenant. Then a hostname whose name does not
// lead to the Gateway gets no certificate, and the TenantGateway says why.
func TestHTTP01Issuance(t *testing.T) {
	t.Parallel()
	egctl := os.Getenv(envoy.EnvEgctl)
	if egctl == "" {
		t.Fatalf("%s is not set: make e2e passes egctl, which judges the challenge route", envoy.EnvEgctl)
	}
	alice := "alice." + webZone
	tenantNamespaces(t, webNamespace, webZone, map[string]string{"tenant-web-alice": alice})
	www := "www." + webZone
	apply(t, httpRoute(webNamespace, "www", webNamespace, "cozystack", www))
	start := time.Now()
	apply(t, http01TenantGateway(t))
	challengeRouted(t, egctl, www)
	hostTrusted(t, www)
	took := time.Since(start)
	t.Logf("new TenantGateway (http01) to a trusted certificate on a programmed listener: %s", took.Round(100*time.Millisecond))

	// A new route hostname, a child tenant's.
	start = time.Now()
	app := "app." + alice
	apply(t, httpRoute("tenant-web-alice", "app", webNamespace, "cozystack", app))
	hostTrusted(t, app)
	added := time.Since(start)
	t.Logf("new route hostname (http01) to a trusted certificate on a programmed listener: %s", added.Round(100*time.Millisecond))

	// A hostname whose name leads away from the Gateway: cert-manager's
	// self-check fails, nothing is issued, and the TenantGateway's
	// listener status and GatewayReady say so with cert-manager's words.
	apply(t, httpRoute(webNamespace, "astray", webNamespace, "cozystack", astray))
	eventually(t, issuance, "the challenge of "+astray+" failing its self-check, and the TenantGateway saying its certificate is not ready", func() (bool, string) {
		ch := challengeOf(t, astray)
		x := tgw(t, webNamespace, "cozystack")
		l := tgwListener(x, astray)
		s, _, m := condition(x, "GatewayReady")
		ok := ch != nil && strings.Contains(str(ch, "status", "reason"), "failed to perform self check") &&
			l != nil && l["ready"] == false && l["reason"] == "CertificateNotReady" && l["message"] != "" &&
			s == "False" && strings.Contains(m, fmt.Sprint(l["name"]))
		return ok, fmt.Sprintf("challenge: %s\nlistener: %v\nGatewayReady %s %q", show(ch), l, s, m)
	})
	remove(t, httpRoute(webNamespace, "astray", webNamespace, "cozystack", astray))

	// E2E_TLS_SAMPLES > 1 measures both latencies that many times
	// (README, Automatic TLS): each sample a new TenantGateway with its
	// owner's hostname, then a new child hostname.
	samples, _ := strconv.Atoi(os.Getenv("E2E_TLS_SAMPLES"))
	if samples < 2 {
		return
	}
	newTGW := map[string]time.Duration{"s00": took}
	newHost := map[string]time.Duration{"s00": added}
	for i := 1; i < samples; i++ {
		remove(t, httpRoute("tenant-web-alice", "app", webNamespace, "cozystack", app))
		remove(t, http01TenantGateway(t))
		eventually(t, settle, "the TenantGateway and its Certificates gone", func() (bool, string) {
			_, x := get(t, gvkTenantGateway, webNamespace, "cozystack")
			certs := list(t, gvkCertificate, webNamespace)
			return !x && len(certs) == 0, fmt.Sprintf("TenantGateway present %v; %d Certificates", x, len(certs))
		})
		start := time.Now()
		if err := applyDocs(t.Context(), k8s, http01TenantGateway(t)); err != nil {
			t.Fatal(err)
		}
		hostTrusted(t, www)
		newTGW[fmt.Sprintf("s%02d", i)] = time.Since(start)
		start = time.Now()
		if err := applyDocs(t.Context(), k8s, httpRoute("tenant-web-alice", "app", webNamespace, "cozystack", app)); err != nil {
			t.Fatal(err)
		}
		hostTrusted(t, app)
		newHost[fmt.Sprintf("s%02d", i)] = time.Since(start)
		t.Logf("sample %d: new TenantGateway %s, new hostname %s", i, newTGW[fmt.Sprintf("s%02d", i)].Round(100*time.Millisecond), newHost[fmt.Sprintf("s%02d", i)].Round(100*time.Millisecond))
	}
	t.Logf("%d new TenantGateways (http01) to a trusted certificate on a programmed listener: %s", samples, quantiles(newTGW))
	t.Logf("%d new route hostnames (http01) to a trusted certificate on a programmed listener: %s", samples, quantiles(newHost))
}

// challengeOf is the ACME Challenge of a name in webNamespace, nil when
// there is none.
func challengeOf(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion("acme.cert-manager.io/v1")
	l.SetKind("ChallengeList")
	if err := k8s.List(t.Context(), l, client.InNamespace(webNamespace)); err != nil {
		t.Fatalf("cannot list challenges: %v", err)
	}
	for i := range l.Items {
		if str(&l.Items[i], "spec", "dnsName") == name {
			return &l.Items[i]
		}
	}
	return nil
}

// tgwListener is the TenantGateway's status entry of the listener for
// hostname.
func tgwListener(x *unstructured.Unstructured, hostname string) map[string]any {
	for _, l := range slice(x, "status", "listeners") {
		if m, _ := l.(map[string]any); m["hostname"] == hostname {
			return m
		}
	}
	return nil
}

// challengeRouted waits for cert-manager's challenge HTTPRoute of host,
// checks that Envoy Gateway's controller accepted it on the Gateway's http
// listener, and has Envoy Gateway's translator judge the live Gateway and
// routes: on port 80 the challenge's path must reach the solver's Service
// and / must redirect to https. The challenge lasts at least cert-manager's
// self-check (five passes, two seconds apart), which the polling catches.
func challengeRouted(t *testing.T, egctl, host string) {
	t.Helper()
	var route *unstructured.Unstructured
	eventually(t, issuance, "cert-manager's challenge HTTPRoute for "+host+" accepted by Envoy Gateway on listener http", func() (bool, string) {
		for _, r := range list(t, gvkHTTPRoute, webNamespace, client.MatchingLabels{gateway.LabelHTTP01Solver: "true"}) {
			for _, h := range slice(&r, "spec", "hostnames") {
				if h == host {
					route = &r
					return acceptedOnHTTP(&r) == "True/Accepted", show(&r)
				}
			}
		}
		return false, "no challenge route; challenges:\n" + challenges(t, webNamespace)
	})
	rules := slice(route, "spec", "rules")
	if len(rules) != 1 {
		t.Fatalf("challenge route %s: want one rule, got %s", route.GetName(), show(route))
	}
	rule, _ := rules[0].(map[string]any)
	matches, _ := rule["matches"].([]any)
	m, _ := matches[0].(map[string]any)
	p, _ := m["path"].(map[string]any)
	path, _ := p["value"].(string)
	refs, _ := rule["backendRefs"].([]any)
	ref, _ := refs[0].(map[string]any)
	want := []string{fmt.Sprintf("%s/%v:%v", webNamespace, ref["name"], ref["port"])}

	// What Envoy Gateway's controller reads, as it was while the challenge
	// was up.
	cluster := []map[string]any{}
	gc, _ := get(t, gvkGatewayClass, "", "envoy")
	cluster = append(cluster, gc.Object)
	for _, ns := range []string{webNamespace, "tenant-web-alice"} {
		n, _ := get(t, gvkNamespace, "", ns)
		cluster = append(cluster, n.Object)
		for _, r := range list(t, gvkHTTPRoute, ns) {
			cluster = append(cluster, r.Object)
		}
	}
	gw, found := get(t, gvkGateway, webNamespace, "cozystack")
	if !found {
		t.Fatal("no Gateway cozystack in " + webNamespace)
	}
	composed := []map[string]any{gw.Object}
	for _, c := range list(t, gvkCertificate, webNamespace) {
		composed = append(composed, c.Object)
	}
	s, err := envoy.NewScenario(cluster, nil, composed)
	if err != nil {
		t.Fatalf("cannot build the translator's input from the live objects: %v", err)
	}
	res, err := envoy.Translate(t.Context(), egctl, s)
	if err != nil {
		t.Fatalf("cannot translate the live Gateway and routes: %v", err)
	}
	rt, backends, err := res.RouteFor(80, host, path)
	if err != nil {
		t.Fatalf("Envoy Gateway's translation of port 80: %v", err)
	}
	if rt.Redirect != nil || !slices.Equal(backends, want) {
		t.Errorf("http://%s%s on port 80: want Envoy Gateway's route to the solver %v ahead of the redirect, got route %s (%s) redirect %v to %v",
			host, path, want, rt.Name, rt.Match, rt.Redirect, backends)
	}
	// The host's other routes on port 80 (the redirect, and here the
	// owner's own route, which the http listener admits) match / and
	// are not judged: only that the challenge's path goes past them.
	t.Logf("Envoy Gateway's translation: http://%s%s → route %s (%s) → %v", host, path, rt.Name, rt.Match, backends)
}

// hostTrusted waits until the http01 Certificate of host's listener is
// Ready for host, its Secret verifies against Pebble's root, Envoy Gateway
// has programmed the listener with it and the TenantGateway reports the
// listener ready.
func hostTrusted(t *testing.T, host string) {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(tlsRun(t, "run", "tls", "pebble-root.pem")) {
		t.Fatal("Pebble's root (run/tls/pebble-root.pem) holds no certificate")
	}
	var name string
	eventually(t, issuance, "Certificate of "+host+" Ready, issued by cert-manager through HTTP-01", func() (bool, string) {
		x := tgw(t, webNamespace, "cozystack")
		l := tgwListener(x, host)
		if l == nil {
			return false, "no listener for " + host + "; TenantGateway: " + show(x)
		}
		name, _ = l["certificateName"].(string)
		c, found := get(t, gvkCertificate, webNamespace, name)
		if !found {
			return false, fmt.Sprintf("no Certificate %q; listener %v", name, l)
		}
		s, _, _ := condition(c, "Ready")
		return s == "True", show(c) + "\n" + challenges(t, webNamespace)
	})
	eventually(t, settle, fmt.Sprintf("Secret %s verifying against Pebble's root for %s", name, host), func() (bool, string) {
		s := &corev1.Secret{}
		if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: webNamespace, Name: name}, s); err != nil {
			return false, err.Error()
		}
		if err := verifies(s, roots, []string{host}); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	eventually(t, settle, "listener of "+host+" programmed by Envoy Gateway and ready on the TenantGateway", func() (bool, string) {
		x := tgw(t, webNamespace, "cozystack")
		l := tgwListener(x, host)
		gw, _ := get(t, gvkGateway, webNamespace, "cozystack")
		ln, _ := l["name"].(string)
		return l != nil && l["ready"] == true && strings.HasPrefix(listenerConds(gw, ln), "Accepted=True/Accepted Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs"),
			fmt.Sprintf("TenantGateway listener %v; Gateway listener %s", l, listenerConds(gw, ln))
	})
}
