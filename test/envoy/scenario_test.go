package envoy

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/sets"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/function-tenant-gateway/test/render"
)

// These tests need no translator: they check what the harness feeds it.

func docs(t *testing.T, s string) []map[string]any {
	t.Helper()
	d, err := render.Documents([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const gatewayDoc = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: tenant-root}
spec:
  gatewayClassName: cilium
  listeners:
  - name: http
    port: 80
    protocol: HTTP
`

func TestNewScenario(t *testing.T) {
	type summary struct {
		Namespaces map[string]map[string]string
		HTTPRoutes map[string][]gwapiv1.Hostname
		TLSRoutes  map[string]string
	}
	cases := map[string]struct {
		reason                      string
		cluster, observed, composed string
		want                        summary
		wantErr                     error
	}{
		"NoGateway": {
			reason:   "A render that composed no Gateway (a Tenant, a Fatal result) cannot be judged.",
			composed: "apiVersion: v1\nkind: Namespace\nmetadata: {name: tenant-acme}\n",
			wantErr:  ErrNoGateway,
		},
		"LabelPatches": {
			reason: "A composed Object's Namespace manifest sets its labels; one the observed Object set and the composed one drops is removed, as server-side apply does; a namespace that does not exist is not created.",
			cluster: `
apiVersion: v1
kind: Namespace
metadata: {name: cozy-dashboard, labels: {team: a}}
---
apiVersion: v1
kind: Namespace
metadata: {name: cozy-old, labels: {namespace.cozystack.io/gateway: tenant-root, team: b}}
`,
			observed: `
apiVersion: kubernetes.m.crossplane.io/v1alpha1
kind: Object
metadata: {name: gw-namespace-cozy-old, namespace: tenant-root}
spec:
  forProvider:
    manifest: {apiVersion: v1, kind: Namespace, metadata: {name: cozy-old, labels: {namespace.cozystack.io/gateway: tenant-root}}}
`,
			composed: gatewayDoc + `
---
apiVersion: kubernetes.m.crossplane.io/v1alpha1
kind: Object
metadata: {name: gw-namespace-cozy-dashboard, namespace: tenant-root}
spec:
  forProvider:
    manifest: {apiVersion: v1, kind: Namespace, metadata: {name: cozy-dashboard, labels: {namespace.cozystack.io/gateway: tenant-root}}}
---
apiVersion: kubernetes.m.crossplane.io/v1alpha1
kind: Object
metadata: {name: gw-namespace-cozy-old, namespace: tenant-root}
spec:
  forProvider:
    manifest: {apiVersion: v1, kind: Namespace, metadata: {name: cozy-old}}
---
apiVersion: kubernetes.m.crossplane.io/v1alpha1
kind: Object
metadata: {name: gw-namespace-cozy-later, namespace: tenant-root}
spec:
  forProvider:
    manifest: {apiVersion: v1, kind: Namespace, metadata: {name: cozy-later, labels: {namespace.cozystack.io/gateway: tenant-root}}}
`,
			want: summary{
				Namespaces: map[string]map[string]string{
					"cozy-dashboard": {"team": "a", "namespace.cozystack.io/gateway": "tenant-root"},
					"cozy-old":       {"team": "b"},
				},
				HTTPRoutes: map[string][]gwapiv1.Hostname{},
				TLSRoutes:  map[string]string{},
			},
		},
		"Routes": {
			reason: "Routes come from the cluster and the render, a composed one replacing the cluster's of the same name; a v1alpha2 TLSRoute becomes v1.",
			cluster: `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: gw-http-redirect, namespace: tenant-root}
spec: {hostnames: [stale.example.org]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: www, namespace: tenant-root}
spec: {hostnames: [www.example.org]}
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TLSRoute
metadata: {name: db, namespace: tenant-root}
spec: {hostnames: [db.example.org]}
`,
			composed: gatewayDoc + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: gw-http-redirect, namespace: tenant-root}
spec: {}
`,
			want: summary{
				Namespaces: map[string]map[string]string{},
				HTTPRoutes: map[string][]gwapiv1.Hostname{"tenant-root/gw-http-redirect": nil, "tenant-root/www": {"www.example.org"}},
				TLSRoutes:  map[string]string{"tenant-root/db": "gateway.networking.k8s.io/v1"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := NewScenario(docs(t, tc.cluster), docs(t, tc.observed), docs(t, tc.composed))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("%s\nerror: want %v, got %v", tc.reason, tc.wantErr, err)
			}
			if err != nil {
				return
			}
			got := summary{Namespaces: map[string]map[string]string{}, HTTPRoutes: map[string][]gwapiv1.Hostname{}, TLSRoutes: map[string]string{}}
			for _, ns := range s.Namespaces {
				got.Namespaces[ns.Name] = ns.Labels
			}
			for _, r := range s.HTTPRoutes {
				got.HTTPRoutes[r.Namespace+"/"+r.Name] = r.Spec.Hostnames
			}
			for _, r := range s.TLSRoutes {
				got.TLSRoutes[r.Namespace+"/"+r.Name] = r.APIVersion
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, d)
			}
		})
	}
}

// TestRuns checks the selector rewrite: the real selectors are evaluated
// here, and each run's listeners admit its namespaces (All) or none.
func TestRuns(t *testing.T) {
	s, err := NewScenario(docs(t, `
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
metadata: {name: tenant-eve}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a, namespace: tenant-alice}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: e, namespace: tenant-eve}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: tenant-root}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: o, namespace: other}
`), nil, docs(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: tenant-root}
spec:
  gatewayClassName: cilium
  listeners:
  - name: http
    port: 80
    protocol: HTTP
    allowedRoutes:
      namespaces:
        from: Selector
        selector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [tenant-root, cozy-cert-manager]}]}
  - name: https
    port: 443
    protocol: HTTPS
    allowedRoutes:
      namespaces: {from: Selector, selector: {matchLabels: {namespace.cozystack.io/gateway: tenant-root}}}
  - name: same
    port: 8080
    protocol: HTTP
  - name: all
    port: 8081
    protocol: HTTP
    allowedRoutes: {namespaces: {from: All}}
  - name: broken
    port: 8082
    protocol: HTTP
    allowedRoutes:
      namespaces: {from: Selector, selector: {matchExpressions: [{key: a, operator: In}]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.runs(nil)
	if err != nil {
		t.Fatal(err)
	}
	all := `{"from":"All"}`
	none := `{"from":"Selector","selector":{"matchExpressions":[{"key":"envoy.test.cozystack.io/no-namespace-has-this-label","operator":"Exists"}]}}`
	broken := `{"from":"Selector","selector":{"matchExpressions":[{"key":"a","operator":"In"}]}}`
	type got struct {
		Namespaces []string
		Routes     []string
		Listeners  map[string]string
	}
	want := []got{
		{Namespaces: []string{"other", "tenant-eve"}, Routes: []string{"other/o", "tenant-eve/e"},
			Listeners: map[string]string{"http": none, "https": none, "same": none, "all": all, "broken": broken}},
		{Namespaces: []string{"tenant-alice"}, Routes: []string{"tenant-alice/a"},
			Listeners: map[string]string{"http": none, "https": all, "same": none, "all": all, "broken": broken}},
		{Namespaces: []string{"tenant-root"}, Routes: []string{"tenant-root/r"},
			Listeners: map[string]string{"http": all, "https": all, "same": all, "all": all, "broken": broken}},
	}
	var gots []got
	for _, r := range runs {
		g := got{Namespaces: r.namespaces, Listeners: map[string]string{}}
		for _, d := range docs(t, string(r.input)) {
			switch groupKind(d) {
			case groupGateway + "/" + kindGateway:
				var gw gwapiv1.Gateway
				if err := convert(d, &gw); err != nil {
					t.Fatal(err)
				}
				if gw.Spec.GatewayClassName != ClassName {
					t.Errorf("the Gateway's class is %q, want %q", gw.Spec.GatewayClassName, ClassName)
				}
				for _, l := range gw.Spec.Listeners {
					b, err := yaml.YAMLToJSON(mustYAML(t, l.AllowedRoutes.Namespaces))
					if err != nil {
						t.Fatal(err)
					}
					g.Listeners[string(l.Name)] = string(b)
				}
			case groupGateway + "/" + kindHTTPRoute:
				md, _ := d["metadata"].(map[string]any)
				g.Routes = append(g.Routes, md["namespace"].(string)+"/"+md["name"].(string))
			}
		}
		gots = append(gots, g)
	}
	if d := cmp.Diff(want, gots); d != "" {
		t.Errorf("runs (-want +got):\n%s", d)
	}
}

func mustYAML(t *testing.T, v any) []byte {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSecrets(t *testing.T) {
	s, err := NewScenario(nil, nil, docs(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: tenant-root}
spec:
  gatewayClassName: cilium
  listeners:
  - name: https-a
    port: 443
    protocol: HTTPS
    hostname: a.example.org
    tls: {certificateRefs: [{name: a-tls}]}
  - name: https
    port: 443
    protocol: HTTPS
    hostname: "*.example.org"
    tls: {certificateRefs: [{name: wildcard, namespace: cozy-certs}]}
  - name: https-apex
    port: 443
    protocol: HTTPS
    hostname: example.org
    tls: {certificateRefs: [{name: wildcard, namespace: cozy-certs}]}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: a, namespace: tenant-root}
spec: {secretName: a-tls, dnsNames: [a.example.org, b.example.org], issuerRef: {name: x}}
`))
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := s.secrets()
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.secrets()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"cozy-certs/wildcard": {"*.example.org", "example.org"},
		"tenant-root/a-tls":   {"a.example.org", "b.example.org"},
	}
	got := map[string][]string{}
	for i, sec := range secrets {
		got[sec.Key()] = sec.DNSNames
		block, _ := pem.Decode(sec.cert)
		if block == nil {
			t.Fatalf("%s: tls.crt holds no PEM block", sec.Key())
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(sec.DNSNames, c.DNSNames); d != "" {
			t.Errorf("%s: the certificate's SANs (-want +got):\n%s", sec.Key(), d)
		}
		if !bytes.Equal(again[i].key, sec.key) {
			t.Errorf("%s: the key changed from one call to the next", sec.Key())
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("SANs by Secret (-want +got):\n%s", d)
	}
}

func TestServe(t *testing.T) {
	x := XDS{
		Listeners: []Listener{{Name: "l443", Port: 10443, FilterChains: []FilterChain{
			{Name: "exact", ServerNames: []string{"www.example.org"}, RouteConfig: "rc-exact"},
			{Name: "wild", ServerNames: []string{"*.example.org"}, RouteConfig: "rc-wild"},
			{Name: "deeper", ServerNames: []string{"*.alice.example.org"}, RouteConfig: "rc-wild"},
		}}, {Name: "l80", Port: 10080, FilterChains: []FilterChain{
			{Name: "http", Default: true, RouteConfig: "rc-http"},
		}}},
		RouteConfigs: []RouteConfig{
			{Name: "rc-exact", VirtualHosts: []VirtualHost{{Name: "www", Domains: []string{"www.example.org"}}}},
			{Name: "rc-wild", VirtualHosts: []VirtualHost{
				{Name: "star", Domains: []string{"*"}},
				{Name: "suffix", Domains: []string{"*.example.org"}},
				{Name: "longer-suffix", Domains: []string{"*.alice.example.org"}},
				{Name: "prefix", Domains: []string{"shop.*"}},
				{Name: "exact", Domains: []string{"a.example.org"}},
			}},
			{Name: "rc-http", VirtualHosts: []VirtualHost{{Name: "only", Domains: []string{"www.example.org"}}}},
		},
	}
	type served struct {
		Chain, VirtualHost, Err string
	}
	cases := map[string]struct {
		port int32
		host string
		want served
	}{
		"ExactServerName":        {443, "www.example.org", served{Chain: "exact", VirtualHost: "www"}},
		"WildcardServerName":     {443, "a.example.org", served{Chain: "wild", VirtualHost: "exact"}},
		"LongestWildcardSuffix":  {443, "x.alice.example.org", served{Chain: "deeper", VirtualHost: "longer-suffix"}},
		"WildcardManyLabelsDeep": {443, "x.y.example.org", served{Chain: "wild", VirtualHost: "suffix"}},
		"NoServerNameMatches":    {443, "example.net", served{Err: `listener l443 has no filter chain for server name "example.net": the connection is closed`}},
		"PlainHTTPDefaultChain":  {80, "www.example.org", served{Chain: "http", VirtualHost: "only"}},
		"NoVirtualHost":          {80, "other.example.org", served{Chain: "http"}},
		"NoListener":             {8443, "www.example.org", served{Err: "no Envoy listener on port 8443 (Gateway port 8443)"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := x.Serve(tc.port, tc.host)
			got := served{Chain: s.FilterChain.Name}
			if s.VirtualHost != nil {
				got.VirtualHost = s.VirtualHost.Name
			}
			if err != nil {
				got.Err = err.Error()
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("-want +got:\n%s", d)
			}
		})
	}
}

func TestRouteFor(t *testing.T) {
	vh := &VirtualHost{Routes: []Route{
		{Name: "headers", Match: "prefix:/", Headers: true},
		{Name: "api", Match: "path-separated-prefix:/api"},
		{Name: "exact", Match: "path:/x"},
		{Name: "regex", Match: "regex:/r[0-9]+"},
		{Name: "root", Match: "prefix:/"},
	}}
	for path, want := range map[string]string{"/": "root", "/api": "api", "/api/v1": "api", "/apix": "root", "/x": "exact", "/r12": "regex", "/r": "root"} {
		got, ok := vh.RouteFor(path)
		if !ok || got.Name != want {
			t.Errorf("RouteFor(%q): want %s, got %s (found %t)", path, want, got.Name, ok)
		}
	}
}

func TestCovers(t *testing.T) {
	cases := []struct {
		san, host string
		want      bool
	}{
		{"www.example.org", "www.example.org", true},
		{"www.example.org", "WWW.Example.org", true},
		{"www.example.org", "example.org", false},
		{"*.example.org", "a.example.org", true},
		{"*.example.org", "a.b.example.org", false},
		{"*.example.org", "example.org", false},
		{"*.example.org", "*.example.org", true},
		{"*.example.org", "a.example.net", false},
	}
	for _, tc := range cases {
		if got := Covers(tc.san, tc.host); got != tc.want {
			t.Errorf("Covers(%q, %q): want %t, got %t", tc.san, tc.host, tc.want, got)
		}
	}
}

// TestMerge checks how the xDS of two translator runs add up: by name, a
// route both have kept once, routes of the later run after the earlier's.
func TestMerge(t *testing.T) {
	a := XDS{
		Listeners: []Listener{{Name: "l80", Port: 10080, FilterChains: []FilterChain{{Name: "http", Default: true, RouteConfig: "rc"}}}},
		RouteConfigs: []RouteConfig{{Name: "rc", VirtualHosts: []VirtualHost{
			{Name: "*", Domains: []string{"*"}, Routes: []Route{{Name: "redirect"}}},
		}}},
		Endpoints: map[string][]string{"c1": {"10.96.0.1:80"}},
	}
	b := XDS{
		Listeners: []Listener{
			{Name: "l80", Port: 10080, FilterChains: []FilterChain{{Name: "http", Default: true, RouteConfig: "rc"}}},
			{Name: "l443", Port: 10443, FilterChains: []FilterChain{{Name: "https", ServerNames: []string{"a.example.org"}}}},
		},
		RouteConfigs: []RouteConfig{{Name: "rc", VirtualHosts: []VirtualHost{
			{Name: "*", Domains: []string{"*"}, Routes: []Route{{Name: "redirect"}, {Name: "acme"}}},
			{Name: "a", Domains: []string{"a.example.org"}, Routes: []Route{{Name: "a"}}},
		}}},
		Endpoints: map[string][]string{"c1": {"10.96.0.1:80"}, "c2": {"10.96.0.2:80"}},
	}
	a.merge(b)
	want := XDS{
		Listeners: []Listener{
			{Name: "l443", Port: 10443, FilterChains: []FilterChain{{Name: "https", ServerNames: []string{"a.example.org"}}}},
			{Name: "l80", Port: 10080, FilterChains: []FilterChain{{Name: "http", Default: true, RouteConfig: "rc"}}},
		},
		RouteConfigs: []RouteConfig{{Name: "rc", VirtualHosts: []VirtualHost{
			{Name: "*", Domains: []string{"*"}, Routes: []Route{{Name: "redirect"}, {Name: "acme"}}},
			{Name: "a", Domains: []string{"a.example.org"}, Routes: []Route{{Name: "a"}}},
		}}},
		Endpoints: map[string][]string{"c1": {"10.96.0.1:80"}, "c2": {"10.96.0.2:80"}},
	}
	if d := cmp.Diff(want, a); d != "" {
		t.Errorf("merged (-want +got):\n%s", d)
	}
}

// TestAsForEnvoyGateway checks the kinds rewrite: only for a Cilium class
// the function observed, only port-443 listeners, each to its protocol's
// kind.
func TestAsForEnvoyGateway(t *testing.T) {
	gateway := func(class string) string {
		return `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: tenant-root}
spec:
  gatewayClassName: ` + class + `
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - name: edge
    port: 80
    protocol: HTTP
    allowedRoutes: {kinds: [{kind: HTTPRoute}]}
  - name: https
    port: 443
    protocol: HTTPS
    allowedRoutes: {kinds: [{group: gateway.networking.k8s.io, kind: HTTPRoute}, {group: gateway.networking.k8s.io, kind: TLSRoute}]}
  - name: tls-api
    port: 443
    protocol: TLS
    allowedRoutes: {kinds: [{group: gateway.networking.k8s.io, kind: HTTPRoute}, {group: gateway.networking.k8s.io, kind: TLSRoute}]}
`
	}
	const classes = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: cilium}
spec: {controllerName: io.cilium/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: envoy}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
`
	type result struct {
		Controller string
		Rewritten  []string
		Kinds      map[string][]string
	}
	pair := []string{"HTTPRoute", "TLSRoute"}
	cases := map[string]struct {
		reason  string
		cluster string
		class   string
		want    result
	}{
		"Cilium": {
			reason:  "A Cilium class: the port-443 listeners get their protocol's kind, port 80 is left alone.",
			cluster: classes, class: "cilium",
			want: result{
				Controller: "io.cilium/gateway-controller",
				Rewritten:  []string{"https", "tls-api"},
				Kinds:      map[string][]string{"http": nil, "edge": {"HTTPRoute"}, "https": {"HTTPRoute"}, "tls-api": {"TLSRoute"}},
			},
		},
		"EnvoyGateway": {
			reason:  "Envoy Gateway's class: judged as composed.",
			cluster: classes, class: "envoy",
			want: result{
				Controller: "gateway.envoyproxy.io/gatewayclass-controller",
				Kinds:      map[string][]string{"http": nil, "edge": {"HTTPRoute"}, "https": pair, "tls-api": pair},
			},
		},
		"ClassNotObserved": {
			reason: "No class observed: judged as composed.",
			class:  "cilium",
			want:   result{Kinds: map[string][]string{"http": nil, "edge": {"HTTPRoute"}, "https": pair, "tls-api": pair}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := NewScenario(docs(t, tc.cluster), nil, docs(t, gateway(tc.class)))
			if err != nil {
				t.Fatal(err)
			}
			got := result{Controller: s.ClassController, Rewritten: s.AsForEnvoyGateway(), Kinds: map[string][]string{}}
			for _, l := range s.Gateway.Spec.Listeners {
				var kinds []string
				if l.AllowedRoutes != nil {
					for _, k := range l.AllowedRoutes.Kinds {
						kinds = append(kinds, string(k.Kind))
					}
				}
				got.Kinds[string(l.Name)] = kinds
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, d)
			}
		})
	}
}

func TestHostnameMatches(t *testing.T) {
	cases := []struct {
		listener string // "" for a listener without hostname
		host     string
		want     bool
	}{
		{"", "a.example.org", true},
		{"a.example.org", "a.example.org", true},
		{"a.example.org", "b.example.org", false},
		{"*.example.org", "a.example.org", true},
		{"*.example.org", "a.b.example.org", true},
		{"*.example.org", "example.org", false},
		{"a.example.org", "*.example.org", true},
		{"example.org", "*.example.org", false},
		{"*.example.org", "*.b.example.org", true},
	}
	for _, tc := range cases {
		var l *gwapiv1.Hostname
		if tc.listener != "" {
			h := gwapiv1.Hostname(tc.listener)
			l = &h
		}
		if got := hostnameMatches(l, tc.host); got != tc.want {
			t.Errorf("hostnameMatches(%q, %q): want %t, got %t", tc.listener, tc.host, tc.want, got)
		}
	}
}

// TestOwnerAnswers checks which of the owner's port-80 routes answer a
// host: those naming it, else the most specific wildcard above it.
func TestOwnerAnswers(t *testing.T) {
	byHost := map[string]sets.Set[string]{
		"www.example.org":   sets.New("tenant-root/www:80"),
		"*.example.org":     sets.New("tenant-root/any:80"),
		"*.foo.example.org": sets.New("tenant-root/foo:80"),
	}
	cases := map[string][]string{
		"www.example.org":     {"tenant-root/www:80"},
		"shop.example.org":    {"tenant-root/any:80"},
		"a.foo.example.org":   {"tenant-root/foo:80"},
		"a.b.foo.example.org": {"tenant-root/foo:80"},
		"foo.example.org":     {"tenant-root/any:80"},
		"*.example.org":       {"tenant-root/any:80"},
		"example.org":         nil,
		"www.example.net":     nil,
	}
	for host, want := range cases {
		b, ok := ownerAnswers(byHost, host)
		if ok != (want != nil) {
			t.Errorf("ownerAnswers(%q): want found %t, got %t", host, want != nil, ok)
			continue
		}
		if d := cmp.Diff(want, sets.List(b), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("ownerAnswers(%q) (-want +got):\n%s", host, d)
		}
	}
}
