package fn

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

func TestRequirements(t *testing.T) {
	type want struct {
		Selectors map[string]string
		Calls     int
		Composed  bool
	}
	spec := `{"apex":"example.org","attachedNamespaces":["cozy-dashboard"],"gatewayClassName":"envoy"}`
	common := map[string]string{
		"httproutes/cozy-dashboard": "gateway.networking.k8s.io/v1 HTTPRoute labels=map[] namespace=cozy-dashboard",
		"httproutes/tenant-root":    "gateway.networking.k8s.io/v1 HTTPRoute labels=map[] namespace=tenant-root",
		"namespaces":                "v1 Namespace labels=map[namespace.cozystack.io/gateway:tenant-root]",
		"namespace-tenant-root":     "v1 Namespace name=tenant-root",
		"namespace-cozy-dashboard":  "v1 Namespace name=cozy-dashboard",
		"gatewayclass":              "gateway.networking.k8s.io/v1 GatewayClass name=envoy",
		// The platform settings, for gateway.certManagerNamespace.
		"platform": "apiextensions.crossplane.io/v1beta1 EnvironmentConfig name=tenant-gateway-platform",
		// Nothing is observed as ours yet, so every object about to be
		// composed is looked up by name first (the ownership guard).
		"probe-gateway":  "gateway.networking.k8s.io/v1 Gateway name=cozystack namespace=tenant-root",
		"probe-issuer":   "cert-manager.io/v1 Issuer name=cozystack-gateway namespace=tenant-root",
		"probe-redirect": "gateway.networking.k8s.io/v1 HTTPRoute name=cozystack-http-redirect namespace=tenant-root",
	}
	with := func(apiVersion string) map[string]string {
		m := map[string]string{
			"tlsroutes/cozy-dashboard": apiVersion + " TLSRoute labels=map[] namespace=cozy-dashboard",
			"tlsroutes/tenant-root":    apiVersion + " TLSRoute labels=map[] namespace=tenant-root",
		}
		for a, b := range common {
			m[a] = b
		}
		return m
	}
	cases := map[string]struct {
		reason string
		served map[string]bool
		want   want
	}{
		"TLSRouteV1": {
			reason: "Where the cluster serves TLSRoute v1 it is listed at v1, per admitted namespace; namespaces and schemas, then routes, then probes: the requirements settle on the fourth call",
			served: v1TLSRoutes,
			want:   want{Selectors: with("gateway.networking.k8s.io/v1"), Calls: 4, Composed: true},
		},
		"TLSRouteV1alpha2": {
			reason: "Where only the experimental v1alpha2 is served, TLSRoutes are listed at v1alpha2",
			served: map[string]bool{"gateway.networking.k8s.io/v1alpha2 TLSRoute": true},
			want:   want{Selectors: with("gateway.networking.k8s.io/v1alpha2"), Calls: 4, Composed: true},
		},
		"NoTLSRoute": {
			reason: "Where no TLSRoute is served, none is listed: listing an unserved kind would fail the whole pipeline",
			served: map[string]bool{},
			want:   want{Selectors: common, Calls: 4, Composed: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, calls := fakeCluster{served: tc.served}.run(t, NewFunction(), newRequest(t, spec, nil, nil))
			got := want{Selectors: map[string]string{}, Calls: calls, Composed: len(rsp.GetDesired().GetResources()) > 0}
			for n, s := range rsp.GetRequirements().GetResources() {
				got.Selectors[n] = describe(s)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestWaitsForRequirements(t *testing.T) {
	rsp, err := NewFunction().RunFunction(t.Context(), newRequest(t, `{"apex":"example.org"}`, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rsp.GetDesired().GetResources()); n != 0 {
		t.Errorf("the first call, before any requirement is resolved, composed %d resources; want none", n)
	}
	if n := len(rsp.GetRequirements().GetSchemas()); n != 2 {
		t.Errorf("the first call asked for %d schemas, want 2 (TLSRoute v1 and v1alpha2)", n)
	}
}

func TestMalformedRoutesAreSkipped(t *testing.T) {
	c := fakeCluster{served: v1TLSRoutes, objects: []string{
		`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"bad","namespace":"tenant-root"},"spec":{"parentRefs":[{"name":"cozystack"}],"hostnames":"a.example.org"}}`,
		`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"odd","namespace":"tenant-root"},"spec":{"parentRefs":[{"name":"cozystack"}],"hostnames":[7]}}`,
		`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"good","namespace":"tenant-root"},"spec":{"parentRefs":[{"name":"cozystack"}],"hostnames":["b.example.org"]}}`,
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tenant-x","labels":{"namespace.cozystack.io/gateway":"tenant-root","namespace.cozystack.io/host":7}}}`,
	}}
	rsp, _ := c.run(t, NewFunction(), newRequest(t, `{"apex":"example.org"}`, nil, nil))
	var got []string
	for _, r := range rsp.GetResults() {
		got = append(got, r.GetSeverity().String()+": "+r.GetMessage())
	}
	want := []string{
		`SEVERITY_WARNING: skipping 3 malformed routes and namespaces: HTTPRoute tenant-root/bad: spec.hostnames is not a list; HTTPRoute tenant-root/odd: spec.hostnames[0] is not a string; Namespace "tenant-x": label "namespace.cozystack.io/host" is not a string`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results: -want, +got:\n%s", diff)
	}
	if _, ok := rsp.GetDesired().GetResources()["certificate-https-b-"+hex8("b.example.org")]; !ok {
		t.Errorf("the well-formed route's hostname got no Certificate; desired: %v", slices.Sorted(maps.Keys(rsp.GetDesired().GetResources())))
	}
}

func describe(s *fnv1.ResourceSelector) string {
	d := s.GetApiVersion() + " " + s.GetKind()
	switch m := s.GetMatch().(type) {
	case *fnv1.ResourceSelector_MatchName:
		d += " name=" + m.MatchName
	case *fnv1.ResourceSelector_MatchLabels:
		d += " labels=" + fmtMap(m.MatchLabels.GetLabels())
	}
	if s.Namespace != nil {
		d += " namespace=" + s.GetNamespace()
	}
	return d
}

func TestRoutesListedClusterWideForManyNamespaces(t *testing.T) {
	objs := make([]string, 0, DefaultMaxScopedNamespaces+1)
	for i := 0; i <= DefaultMaxScopedNamespaces; i++ {
		objs = append(objs, fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tenant-t%02d","labels":{"namespace.cozystack.io/gateway":"tenant-root"}}}`, i))
	}
	rsp, _ := fakeCluster{served: v1TLSRoutes, objects: objs}.run(t, NewFunction(), newRequest(t, `{"apex":"example.org"}`, nil, nil))
	var routes []string
	for n, s := range rsp.GetRequirements().GetResources() {
		if strings.HasPrefix(n, "httproutes") || strings.HasPrefix(n, "tlsroutes") {
			routes = append(routes, n+" "+describe(s))
		}
	}
	sort.Strings(routes)
	want := []string{
		"httproutes gateway.networking.k8s.io/v1 HTTPRoute labels=map[]",
		"tlsroutes gateway.networking.k8s.io/v1 TLSRoute labels=map[]",
	}
	if diff := cmp.Diff(want, routes); diff != "" {
		t.Errorf("with %d admitted namespaces routes are listed once, cluster-wide: -want, +got:\n%s", DefaultMaxScopedNamespaces+2, diff)
	}
}
