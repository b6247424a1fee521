package envoy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/function-tenant-gateway/test/render"
)

// scenario builds a Scenario from hand-written YAML: what the function read
// from the cluster and what it composed.
func scenario(t *testing.T, cluster, composed string) *Scenario {
	t.Helper()
	c, err := render.Documents([]byte(cluster))
	if err != nil {
		t.Fatal(err)
	}
	o, err := render.Documents([]byte(composed))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewScenario(c, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// judgement is everything the helpers read from a Result, for one
// cmp.Diff per case.
type judgement struct {
	Runs      [][]string
	Accepted  Condition
	Listeners map[string]ListenerStatus
	// Routes maps "<kind>/<namespace>/<name>" to its parent statuses by
	// sectionName.
	Routes map[string]map[string][]Condition
	SNI    map[string]Presented
	HTTPS  map[string][]string
	HTTP   map[string][]string
	// Uncovered are the port-443 domains whose certificate does not
	// cover them.
	Uncovered map[string]Presented
	// Redirects maps a host to whether http://host/ is a 301 to https.
	Redirects map[string]bool
}

func judge(t *testing.T, r *Result, redirectHosts []string) judgement {
	t.Helper()
	j := judgement{
		Accepted:  r.GatewayAccepted(),
		Listeners: r.Listeners(),
		Routes:    map[string]map[string][]Condition{},
		SNI:       r.SNI(443),
		HTTPS:     r.DomainBackends(443),
		HTTP:      r.DomainBackends(80),
		Uncovered: r.Uncovered(443),
		Redirects: map[string]bool{},
	}
	for _, run := range r.Runs {
		j.Runs = append(j.Runs, run.Namespaces)
	}
	for _, h := range r.HTTPRoutes {
		p, err := r.RouteParents(kindHTTPRoute, h.Namespace, h.Name)
		if err != nil {
			t.Fatal(err)
		}
		j.Routes[kindHTTPRoute+"/"+h.Namespace+"/"+h.Name] = p
	}
	for _, tr := range r.TLSRoutes {
		p, err := r.RouteParents(kindTLSRoute, tr.Namespace, tr.Name)
		if err != nil {
			t.Fatal(err)
		}
		j.Routes[kindTLSRoute+"/"+tr.Namespace+"/"+tr.Name] = p
	}
	for _, h := range redirectHosts {
		j.Redirects[h] = r.RedirectsToHTTPS(h) == nil
	}
	return j
}

var (
	accepted     = Condition{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"}
	programmed   = Condition{Type: "Programmed", Status: metav1.ConditionTrue, Reason: "Programmed"}
	resolvedRefs = Condition{Type: "ResolvedRefs", Status: metav1.ConditionTrue, Reason: "ResolvedRefs"}
	healthy      = []Condition{accepted, programmed, resolvedRefs}
	routeOK      = []Condition{accepted, resolvedRefs}
)

const redirectRoute = `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: gw-http-redirect, namespace: tenant-root}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: http}]
  rules:
  - filters: [{type: RequestRedirect, requestRedirect: {scheme: https, statusCode: 301}}]
`

const httpListener = `
  - name: http
    port: 80
    protocol: HTTP
    allowedRoutes:
      namespaces:
        from: Selector
        selector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [tenant-root]}]}
`

// TestTranslate has the real translator judge tiny hand-written Gateways,
// one per thing the helpers read.
func TestTranslate(t *testing.T) {
	egctl := Egctl(t)
	cases := map[string]struct {
		reason        string
		cluster       string
		composed      string
		redirectHosts []string
		want          judgement
	}{
		"HTTPSListenerServesItsRoute": {
			reason: "An HTTPS listener admitting HTTPRoutes serves the route's hostname with the Certificate's SANs; port 80 redirects it.",
			cluster: `
apiVersion: v1
kind: Namespace
metadata: {name: tenant-root, labels: {namespace.cozystack.io/gateway: tenant-root}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: www, namespace: tenant-root}
spec:
  parentRefs: [{name: gw, sectionName: https-www}]
  hostnames: [www.example.org]
  rules: [{backendRefs: [{name: www, port: 8080}]}]
`,
			composed: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: tenant-root}
spec:
  gatewayClassName: cilium
  listeners:` + httpListener + `
  - name: https-www
    port: 443
    protocol: HTTPS
    hostname: www.example.org
    allowedRoutes:
      kinds: [{group: gateway.networking.k8s.io, kind: HTTPRoute}]
      namespaces: {from: Selector, selector: {matchLabels: {namespace.cozystack.io/gateway: tenant-root}}}
    tls: {mode: Terminate, certificateRefs: [{name: gw-www-tls}]}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: gw-www-tls, namespace: tenant-root}
spec:
  secretName: gw-www-tls
  dnsNames: [www.example.org]
  issuerRef: {kind: Issuer, name: gw}
` + redirectRoute,
			redirectHosts: []string{"www.example.org"},
			want: judgement{
				Runs:     [][]string{{"tenant-root"}},
				Accepted: accepted,
				Listeners: map[string]ListenerStatus{
					"http":      {Conditions: healthy, AttachedRoutes: 1, SupportedKinds: []string{"HTTPRoute", "GRPCRoute"}},
					"https-www": {Conditions: healthy, AttachedRoutes: 1, SupportedKinds: []string{"HTTPRoute"}},
				},
				Routes: map[string]map[string][]Condition{
					"HTTPRoute/tenant-root/www":              {"https-www": routeOK},
					"HTTPRoute/tenant-root/gw-http-redirect": {"http": routeOK},
				},
				SNI: map[string]Presented{
					"www.example.org": {FilterChain: "tenant-root/gw/https-www", Secret: "tenant-root/gw-www-tls", DNSNames: []string{"www.example.org"}},
				},
				HTTPS:     map[string][]string{"www.example.org": {"tenant-root/www:8080"}},
				HTTP:      map[string][]string{},
				Uncovered: map[string]Presented{},
				Redirects: map[string]bool{"www.example.org": true},
			},
		},
		"TLSPassthroughListenerForwardsByServerName": {
			reason: "A TLS passthrough listener sends connections for its hostname to the TLSRoute's backend, presenting no certificate; a v1alpha2 TLSRoute is read as v1.",
			cluster: `
apiVersion: v1
kind: Namespace
metadata: {name: tenant-root}
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TLSRoute
metadata: {name: db, namespace: tenant-root}
spec:
  parentRefs: [{name: gw, sectionName: tls-db}]
  hostnames: [db.example.org]
  rules: [{backendRefs: [{name: db, port: 5432}]}]
`,
			composed: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: tenant-root}
spec:
  gatewayClassName: cilium
  listeners:
  - name: tls-db
    port: 443
    protocol: TLS
    hostname: db.example.org
    allowedRoutes:
      kinds: [{group: gateway.networking.k8s.io, kind: TLSRoute}]
      namespaces: {from: Same}
    tls: {mode: Passthrough}
`,
			want: judgement{
				Runs:     [][]string{{"tenant-root"}},
				Accepted: accepted,
				Listeners: map[string]ListenerStatus{
					"tls-db": {Conditions: healthy, AttachedRoutes: 1, SupportedKinds: []string{"TLSRoute"}},
				},
				Routes: map[string]map[string][]Condition{
					"TLSRoute/tenant-root/db": {"tls-db": routeOK},
				},
				SNI: map[string]Presented{
					"db.example.org": {FilterChain: "tlsroute/tenant-root/db", Backends: []string{"tenant-root/db:5432"}},
				},
				HTTPS:     map[string][]string{},
				HTTP:      map[string][]string{},
				Uncovered: map[string]Presented{},
				Redirects: map[string]bool{},
			},
		},
		"SelectorExcludesANamespace": {
			reason: "A listener's namespace selector admits the labelled namespaces (one labelled by the function's patch) and refuses a route from an unlabelled one with NotAllowedByListeners; an existing Secret gets the listener's hostname as SAN.",
			cluster: `
apiVersion: v1
kind: Namespace
metadata: {name: tenant-root, labels: {namespace.cozystack.io/gateway: tenant-root}}
---
apiVersion: v1
kind: Namespace
metadata: {name: tenant-alice, labels: {namespace.cozystack.io/gateway: tenant-root}}
---
apiVersion: v1
kind: Namespace
metadata: {name: cozy-dashboard}
---
apiVersion: v1
kind: Namespace
metadata: {name: tenant-eve}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: alice, namespace: tenant-alice}
spec:
  parentRefs: [{name: gw, namespace: tenant-root}]
  hostnames: [alice.example.org]
  rules: [{backendRefs: [{name: alice, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: dashboard, namespace: cozy-dashboard}
spec:
  parentRefs: [{name: gw, namespace: tenant-root}]
  hostnames: [dashboard.example.org]
  rules: [{backendRefs: [{name: dashboard, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: tenant-eve}
spec:
  parentRefs: [{name: gw, namespace: tenant-root}]
  hostnames: [shop.example.org]
  rules: [{backendRefs: [{name: shop, port: 80}]}]
`,
			composed: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: tenant-root}
spec:
  gatewayClassName: cilium
  listeners:
  - name: https
    port: 443
    protocol: HTTPS
    hostname: "*.example.org"
    allowedRoutes:
      kinds: [{group: gateway.networking.k8s.io, kind: HTTPRoute}]
      namespaces: {from: Selector, selector: {matchLabels: {namespace.cozystack.io/gateway: tenant-root}}}
    tls: {mode: Terminate, certificateRefs: [{name: wildcard-example-org}]}
---
apiVersion: kubernetes.m.crossplane.io/v1alpha1
kind: Object
metadata: {name: gw-namespace-cozy-dashboard, namespace: tenant-root}
spec:
  forProvider:
    manifest:
      apiVersion: v1
      kind: Namespace
      metadata:
        name: cozy-dashboard
        labels: {namespace.cozystack.io/gateway: tenant-root}
`,
			want: judgement{
				Runs:     [][]string{{"cozy-dashboard", "tenant-alice"}, {"tenant-eve"}},
				Accepted: accepted,
				Listeners: map[string]ListenerStatus{
					"https": {Conditions: healthy, AttachedRoutes: 2, SupportedKinds: []string{"HTTPRoute"}},
				},
				Routes: map[string]map[string][]Condition{
					"HTTPRoute/tenant-alice/alice":       {"": routeOK},
					"HTTPRoute/cozy-dashboard/dashboard": {"": routeOK},
					"HTTPRoute/tenant-eve/shop": {"": {
						{Type: "Accepted", Status: metav1.ConditionFalse, Reason: "NotAllowedByListeners"},
						resolvedRefs,
					}},
				},
				SNI: map[string]Presented{
					"*.example.org": {FilterChain: "tenant-root/gw/https", Secret: "tenant-root/wildcard-example-org", DNSNames: []string{"*.example.org"}},
				},
				HTTPS: map[string][]string{
					"alice.example.org":     {"tenant-alice/alice:80"},
					"dashboard.example.org": {"cozy-dashboard/dashboard:80"},
				},
				HTTP:      map[string][]string{},
				Uncovered: map[string]Presented{},
				Redirects: map[string]bool{},
			},
		},
		"WildcardCertificateDoesNotCoverDeeperNames": {
			reason: "A wildcard listener routes a name two labels below its apex (Gateway API wildcards match any number of labels) but its wildcard certificate does not cover it.",
			cluster: `
apiVersion: v1
kind: Namespace
metadata: {name: tenant-root}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: apps, namespace: tenant-root}
spec:
  parentRefs: [{name: gw}]
  hostnames: [a.example.org, a.b.example.org]
  rules: [{backendRefs: [{name: apps, port: 80}]}]
`,
			composed: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: tenant-root}
spec:
  gatewayClassName: cilium
  listeners:
  - name: https
    port: 443
    protocol: HTTPS
    hostname: "*.example.org"
    allowedRoutes: {kinds: [{kind: HTTPRoute}]}
    tls: {certificateRefs: [{name: gw-wildcard-tls}]}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: gw-wildcard, namespace: tenant-root}
spec:
  secretName: gw-wildcard-tls
  dnsNames: ["*.example.org"]
  issuerRef: {kind: Issuer, name: gw}
`,
			want: judgement{
				Runs:     [][]string{{"tenant-root"}},
				Accepted: accepted,
				Listeners: map[string]ListenerStatus{
					"https": {Conditions: healthy, AttachedRoutes: 1, SupportedKinds: []string{"HTTPRoute"}},
				},
				Routes: map[string]map[string][]Condition{
					"HTTPRoute/tenant-root/apps": {"": routeOK},
				},
				SNI: map[string]Presented{
					"*.example.org": {FilterChain: "tenant-root/gw/https", Secret: "tenant-root/gw-wildcard-tls", DNSNames: []string{"*.example.org"}},
				},
				HTTPS: map[string][]string{
					"a.example.org":   {"tenant-root/apps:80"},
					"a.b.example.org": {"tenant-root/apps:80"},
				},
				HTTP: map[string][]string{},
				Uncovered: map[string]Presented{
					"a.b.example.org": {FilterChain: "tenant-root/gw/https", Secret: "tenant-root/gw-wildcard-tls", DNSNames: []string{"*.example.org"}},
				},
				Redirects: map[string]bool{},
			},
		},
		"HTTPSListenerAdmittingTLSRoutes": {
			reason: "Envoy Gateway refuses an HTTPS listener whose kinds include TLSRoute (the pair the function composes today): not programmed, InvalidRouteKinds, no Accepted, so neither is the Gateway; no Envoy listener is made for it.",
			cluster: `
apiVersion: v1
kind: Namespace
metadata: {name: tenant-root}
`,
			composed: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: tenant-root}
spec:
  gatewayClassName: cilium
  listeners:
  - name: https
    port: 443
    protocol: HTTPS
    hostname: www.example.org
    allowedRoutes:
      kinds: [{group: gateway.networking.k8s.io, kind: HTTPRoute}, {group: gateway.networking.k8s.io, kind: TLSRoute}]
      namespaces: {from: Same}
    tls: {mode: Terminate, certificateRefs: [{name: www-tls}]}
`,
			want: judgement{
				Runs:     [][]string{nil},
				Accepted: Condition{Type: "Accepted", Status: metav1.ConditionFalse, Reason: "ListenersNotValid"},
				Listeners: map[string]ListenerStatus{
					"https": {Conditions: []Condition{
						{Type: "Programmed", Status: metav1.ConditionFalse, Reason: "Invalid"},
						{Type: "ResolvedRefs", Status: metav1.ConditionFalse, Reason: "InvalidRouteKinds"},
					}, SupportedKinds: []string{"HTTPRoute"}},
				},
				Routes:    map[string]map[string][]Condition{},
				SNI:       map[string]Presented{},
				HTTPS:     map[string][]string{},
				HTTP:      map[string][]string{},
				Uncovered: map[string]Presented{},
				Redirects: map[string]bool{},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := Translate(context.Background(), egctl, scenario(t, tc.cluster, tc.composed))
			if err != nil {
				t.Fatal(err)
			}
			got := judge(t, r, tc.redirectHosts)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, d)
			}
		})
	}
}

// TestAssertions runs the assertion helpers against the translator on the
// smallest healthy Gateway, so a helper that cannot pass is caught.
func TestAssertions(t *testing.T) {
	egctl := Egctl(t)
	s := scenario(t, `
apiVersion: v1
kind: Namespace
metadata: {name: tenant-root}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: www, namespace: tenant-root}
spec:
  parentRefs: [{name: gw, sectionName: https}]
  hostnames: [www.example.org]
  rules: [{backendRefs: [{name: www, port: 80}]}]
`, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: tenant-root}
spec:
  gatewayClassName: cilium
  listeners:`+httpListener+`
  - name: https
    port: 443
    protocol: HTTPS
    hostname: www.example.org
    allowedRoutes: {kinds: [{kind: HTTPRoute}]}
    tls: {certificateRefs: [{name: www-tls}]}
`+redirectRoute)
	r, err := Translate(context.Background(), egctl, s)
	if err != nil {
		t.Fatal(err)
	}
	AssertGatewayAccepted(t, r)
	AssertListenersHealthy(t, r)
	AssertRouteParent(t, r, kindHTTPRoute, "tenant-root", "www", "https", routeOK)
	AssertRouteParent(t, r, kindHTTPRoute, "tenant-root", "gw-http-redirect", "http", routeOK)
	if err := r.RedirectsToHTTPS("www.example.org"); err != nil {
		t.Error(err)
	}
}

// TestLoaderDropsNamespaceLabels pins down why the harness rewrites
// selectors: given a listener selecting its own namespace by
// kubernetes.io/metadata.name and that namespace labelled so, egctl refuses
// the namespace's route, because its file loader drops Namespace labels.
// Should a later Envoy Gateway keep them, this fails and the per-namespace
// runs can go.
func TestLoaderDropsNamespaceLabels(t *testing.T) {
	egctl := Egctl(t)
	file := filepath.Join(t.TempDir(), "in.yaml")
	in := `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: envoy-gateway}
spec: {controllerName: ` + ControllerName + `}
---
apiVersion: v1
kind: Namespace
metadata: {name: tenant-root, labels: {kubernetes.io/metadata.name: tenant-root}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: tenant-root}
spec:
  gatewayClassName: envoy-gateway
  listeners:` + httpListener + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: www, namespace: tenant-root}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: www, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: www, namespace: tenant-root}
spec: {clusterIP: 10.96.0.1, ports: [{port: 80}]}
`
	if err := os.WriteFile(file, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := egctlRun(context.Background(), egctl, Args(file)...)
	if err != nil {
		t.Fatal(err)
	}
	var tr translated
	if err := json.Unmarshal(out, &tr); err != nil {
		t.Fatal(err)
	}
	var got []Condition
	for _, h := range tr.HTTPRoutes {
		for _, p := range h.Status.Parents {
			got = append(got, Conditions(p.Conditions)...)
		}
	}
	want := []Condition{{Type: "Accepted", Status: metav1.ConditionFalse, Reason: "NotAllowedByListeners"}, resolvedRefs}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("route status (-want +got):\n%s", d)
	}
}
