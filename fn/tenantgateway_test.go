package fn

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

func TestEdgeConditionsGuardAndReadiness(t *testing.T) {
	type want struct {
		Conditions []string
		Desired    map[string]string
		// Composite is the XR's readiness the function sets.
		Composite string
	}
	const foreignGateway = `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":"cozystack","namespace":"tenant-root"}}`
	const readyIssuer = `{"apiVersion":"cert-manager.io/v1","kind":"Issuer","metadata":{"name":"cozystack-gateway","namespace":"tenant-root"},"status":{"conditions":[{"type":"Ready","status":"True"}]}}`
	cases := map[string]struct {
		reason   string
		cluster  []string
		noClass  bool
		observed map[string]*fnv1.Resource
		want     want
	}{
		"ForeignGateway": {
			reason:  "A Gateway at our name that is not ours is not composed, GatewayReady says why, and the XR is not ready whatever the rest says",
			cluster: []string{foreignGateway},
			want: want{
				Conditions: []string{
					"GatewayReady False ReconcileError: Gateway tenant-root/cozystack exists but is not owned by TenantGateway cozystack; refusing to take over (delete it manually if you want the function to manage it)",
					"ListenersReady True ListenersFit: every hostname fits within the 64-listener limit",
					"RoutesAccepted True Accepted: every claimed hostname is served or reported in status.hostnames",
				},
				Desired:   map[string]string{"issuer": "READY_FALSE", "redirect": "READY_FALSE"},
				Composite: "READY_FALSE",
			},
		},
		"NoGatewayClass": {
			reason:  "The cluster has no GatewayClass cilium: GatewayClassNotFound, looked up by the edge",
			noClass: true,
			want: want{
				Conditions: []string{
					"GatewayReady False GatewayClassNotFound: GatewayClass cilium does not exist, so no controller will accept Gateway tenant-root/cozystack; set spec.gatewayClassName to a class of the cluster (kubectl get gatewayclass)",
					"ListenersReady True ListenersFit: every hostname fits within the 64-listener limit",
					"RoutesAccepted True Accepted: every claimed hostname is served or reported in status.hostnames",
				},
				Desired:   map[string]string{"gateway": "READY_FALSE", "issuer": "READY_FALSE", "redirect": "READY_FALSE"},
				Composite: "READY_UNSPECIFIED",
			},
		},
		"ObservedIssuerReady": {
			reason:   "An observed Issuer with Ready=True is marked ready; the rest are not observed yet; the XR's readiness is left to Crossplane",
			observed: map[string]*fnv1.Resource{"issuer": {Resource: resource.MustStructJSON(readyIssuer)}},
			want: want{
				Conditions: []string{
					"GatewayReady False GatewayNotAccepted: Underlying Gateway tenant-root/cozystack has not been accepted by its controller yet",
					"ListenersReady True ListenersFit: every hostname fits within the 64-listener limit",
					"RoutesAccepted True Accepted: every claimed hostname is served or reported in status.hostnames",
				},
				Desired:   map[string]string{"gateway": "READY_FALSE", "issuer": "READY_TRUE", "redirect": "READY_FALSE"},
				Composite: "READY_UNSPECIFIED",
			},
		},
		"GatewayStatusOfAnOlderGeneration": {
			reason: "The edge reads the Gateway's generation and the observedGeneration of its conditions and listeners: a status of generation 2 on a Gateway at 3 (its controller down while routes changed) is not judged",
			observed: map[string]*fnv1.Resource{"issuer": {Resource: resource.MustStructJSON(readyIssuer)}, "gateway": {Resource: resource.MustStructJSON(`{
				"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":"cozystack","namespace":"tenant-root","generation":3},
				"spec":{"listeners":[{"name":"http","port":80,"protocol":"HTTP"}]},
				"status":{"conditions":[{"type":"Accepted","status":"True","observedGeneration":2},{"type":"Programmed","status":"True","observedGeneration":2}],
					"listeners":[{"name":"http","conditions":[{"type":"Accepted","status":"True","observedGeneration":2},{"type":"Programmed","status":"True","observedGeneration":2}]}]}}`)}},
			want: want{
				Conditions: []string{
					"GatewayReady False GatewayStatusStale: Underlying Gateway tenant-root/cozystack is at generation 3; its controller's status describes generation 2, so the Gateway is not judged until the controller has seen it",
					"ListenersReady True ListenersFit: every hostname fits within the 64-listener limit",
					"RoutesAccepted True Accepted: every claimed hostname is served or reported in status.hostnames",
				},
				Desired:   map[string]string{"gateway": "READY_FALSE", "issuer": "READY_TRUE", "redirect": "READY_FALSE"},
				Composite: "READY_UNSPECIFIED",
			},
		},
		"GatewayStatusOfItsGeneration": {
			reason: "The same Gateway with its status of generation 3: judged, programmed and ready",
			observed: map[string]*fnv1.Resource{"issuer": {Resource: resource.MustStructJSON(readyIssuer)}, "gateway": {Resource: resource.MustStructJSON(`{
				"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":"cozystack","namespace":"tenant-root","generation":3},
				"spec":{"listeners":[{"name":"http","port":80,"protocol":"HTTP"}]},
				"status":{"conditions":[{"type":"Accepted","status":"True","observedGeneration":3},{"type":"Programmed","status":"True","observedGeneration":3}],
					"listeners":[{"name":"http","conditions":[{"type":"Accepted","status":"True","observedGeneration":3},{"type":"Programmed","status":"True","observedGeneration":3}]}]}}`)}},
			want: want{
				Conditions: []string{
					"GatewayReady True Reconciled: Gateway tenant-root/cozystack is programmed and every listener is ready",
					"ListenersReady True ListenersFit: every hostname fits within the 64-listener limit",
					"RoutesAccepted True Accepted: every claimed hostname is served or reported in status.hostnames",
				},
				Desired:   map[string]string{"gateway": "READY_TRUE", "issuer": "READY_TRUE", "redirect": "READY_FALSE"},
				Composite: "READY_UNSPECIFIED",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := newRequest(t, `{"apex":"example.org"}`, nil, nil)
			req.Observed.Resources = tc.observed
			rsp, _ := fakeCluster{served: v1TLSRoutes, objects: tc.cluster, noClass: tc.noClass}.run(t, NewFunction(), req)
			got := want{Desired: map[string]string{}, Composite: rsp.GetDesired().GetComposite().GetReady().String()}
			for _, c := range rsp.GetConditions() {
				got.Conditions = append(got.Conditions, c.GetType()+" "+map[fnv1.Status]string{fnv1.Status_STATUS_CONDITION_TRUE: "True", fnv1.Status_STATUS_CONDITION_FALSE: "False"}[c.GetStatus()]+" "+c.GetReason()+": "+c.GetMessage())
			}
			for k, r := range rsp.GetDesired().GetResources() {
				got.Desired[k] = r.GetReady().String()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestStatusRoundTrip writes the status through the real writer and reads it
// back through the real reader: a run that sees what the last one wrote, with
// nothing changed, raises no warning, even where the status lists are cut.
func TestStatusRoundTrip(t *testing.T) {
	var objects []string
	for _, ns := range []string{"tenant-root", "cozy-a"} {
		objects = append(objects, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+ns+`","labels":{"namespace.cozystack.io/gateway":"tenant-root"}}}`)
		for i := range 150 {
			// 150 contested hostnames: status.conflicts keeps 100.
			objects = append(objects, fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"r%03d","namespace":%q},"spec":{"parentRefs":[{"name":"cozystack","namespace":"tenant-root"}],"hostnames":["h%03d.example.org"]}}`, i, ns, i))
		}
	}
	c := fakeCluster{served: v1TLSRoutes, objects: objects}
	spec := `{"apex":"example.org","certMode":"existingSecret","wildcardSecretRef":{"name":"w"},"attachedNamespaces":["cozy-a"]}`
	first, _ := c.run(t, NewFunction(), newRequest(t, spec, nil, nil))
	// 150 pins do not fit in the wildcard mode's 61 free listeners: the
	// conflicts, the hostnames left out and the listener count are news.
	if n := len(warningsOf(first)); n != 3 {
		t.Fatalf("first run: want three warnings, got %q", warningsOf(first))
	}
	req := newRequest(t, spec, nil, nil)
	req.Observed.Composite.Resource.Fields["status"] = first.GetDesired().GetComposite().GetResource().GetFields()["status"]
	req.Observed.Resources = first.GetDesired().GetResources()
	second, _ := c.run(t, NewFunction(), req)
	if w := warningsOf(second); len(w) != 0 {
		t.Errorf("second run, nothing changed: want no warnings, got %q", w)
	}
	if n := len(second.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue().GetFields()["conflicts"].GetListValue().GetValues()); n != 100 {
		t.Errorf("status.conflicts has %d entries, want 100", n)
	}
}

// TestMalformedStatusIgnored: the XR's status is the function's own memory;
// one that does not decode is ignored with a warning, never fatal.
func TestMalformedStatusIgnored(t *testing.T) {
	req := newRequest(t, `{"apex":"example.org"}`, nil, nil)
	req.Observed.Composite.Resource.Fields["status"] = structpb.NewStructValue(resource.MustStructJSON(`{"listeners":[{"name":"http","port":"80"}]}`))
	rsp, _ := fakeCluster{served: v1TLSRoutes}.run(t, NewFunction(), req)
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			t.Fatalf("a malformed status made the run fatal: %s", r.GetMessage())
		}
	}
	w := warningsOf(rsp)
	if len(w) != 1 || !strings.HasPrefix(w[0], "ignoring the TenantGateway's status as the function's memory of the last run") {
		t.Errorf("want one warning saying the status is ignored, got %q", w)
	}
	if _, ok := rsp.GetDesired().GetResources()["gateway"]; !ok {
		t.Errorf("nothing composed")
	}
}

func warningsOf(rsp *fnv1.RunFunctionResponse) []string {
	var out []string
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING {
			out = append(out, r.GetMessage())
		}
	}
	return out
}

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
		// The platform settings, for gateway.certManagerNamespace and the
		// order quota.
		"platform": "apiextensions.crossplane.io/v1beta1 EnvironmentConfig name=tenant-gateway-platform",
		// The records of the order ledger of example.org, in the platform's
		// namespace: labelled with the registered domain's full hash.
		"order-ledger": "v1 ConfigMap labels=map[cozystack.io/order-ledger:" + gateway.LedgerLabel("example.org") + "] namespace=cozy-cert-manager",
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

func describe(s *fnv1.ResourceSelector) string {
	d := s.GetApiVersion() + " " + s.GetKind()
	switch m := s.GetMatch().(type) {
	case *fnv1.ResourceSelector_MatchName:
		d += " name=" + m.MatchName
	case *fnv1.ResourceSelector_MatchLabels:
		d += " labels=" + fmt.Sprint(m.MatchLabels.GetLabels())
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

// TestWarningsOnlyOnChange runs a TenantGateway as Crossplane does, one run
// after another: each run's request carries the status the last one wrote
// (through writeStatus, read back by observePrevious) and observes the
// resources it composed. A Warning becomes an event, so each cause is warned
// about when it changes, never again while it stays.
func TestWarningsOnlyOnChange(t *testing.T) {
	// No order quota (the platform setting lifts it): these runs would
	// order 70 Certificates at once. The deprecated acmeOrdersPerBranch
	// still decodes.
	const spec = `{"apex":"example.org","attachedNamespaces":["cozy-b","tenant-a"],"acmeOrdersPerBranch":0}`
	namespaces := []string{nsJSON("tenant-root"), nsJSON("tenant-a"), nsJSON("cozy-b"), platformWith(`{"gateway":{"certificateOrders":{"letsencrypt-prod":{"limit":0}}}}`)}
	apps := make([]string, 0, 71)
	for i := range 71 {
		apps = append(apps, fmt.Sprintf("app%02d.example.org", i))
	}
	conflictR, conflictS := routeJSON("tenant-a", "r", "x.example.org"), routeJSON("cozy-b", "s", "x.example.org")
	cluster := func(routes ...string) []string { return append(slices.Clone(namespaces), routes...) }
	// 71 hostnames, 63 HTTPS listeners shared round-robin: the owner's
	// app00 and cozy-b's x.example.org first, then the owner's others.
	first := []string{
		"hostname conflicts changed; 1 contested now: x.example.org: HTTPRoute/cozy-b/s keeps it, HTTPRoute/tenant-a/r refused",
		"hostnames and child apexes left out changed; 8 left out now: app62.example.org (OverListenerLimit), app63.example.org (OverListenerLimit), app64.example.org (OverListenerLimit), app65.example.org (OverListenerLimit), app66.example.org (OverListenerLimit), app67.example.org (OverListenerLimit), app68.example.org (OverListenerLimit), app69.example.org (OverListenerLimit)",
		"Gateway tenant-root/cozystack now has 64 listeners, close to the limit of 64; certMode dns01 serves every hostname under the apex with a fixed set of listeners",
	}
	base := cluster(conflictR, conflictS, routeJSON("tenant-root", "apps", apps[:70]...))
	cases := map[string]struct {
		reason string
		runs   [][]string
		want   [][]string
	}{
		"Unchanged": {
			reason: "runs that see what the last one wrote, with nothing changed, say nothing",
			runs:   [][]string{base, base, base},
			want:   [][]string{first, nil, nil},
		},
		"OneMoreLeftOut": {
			reason: "one more hostname that does not fit: only the hostnames left out changed",
			runs:   [][]string{base, cluster(conflictR, conflictS, routeJSON("tenant-root", "apps", apps...)), cluster(conflictR, conflictS, routeJSON("tenant-root", "apps", apps...))},
			want:   [][]string{first, {"hostnames and child apexes left out changed; 9 left out now: " + overLimit(62, 70)}, nil},
		},
		"ConflictGoneAndBack": {
			reason: "a conflict that ends is not warned about (RoutesAccepted says so); when it comes back, only the conflicts changed",
			runs:   [][]string{base, cluster(conflictS, routeJSON("tenant-root", "apps", apps[:70]...)), base},
			want:   [][]string{first, nil, first[:1]},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got [][]string
			var last *fnv1.RunFunctionResponse
			for _, objects := range tc.runs {
				req := newRequest(t, spec, nil, nil)
				if last != nil {
					// What Crossplane applied of the last response.
					req.Observed.Composite.Resource.Fields["status"] = last.GetDesired().GetComposite().GetResource().GetFields()["status"]
					req.Observed.Resources = last.GetDesired().GetResources()
				}
				last, _ = fakeCluster{served: v1TLSRoutes, objects: objects}.run(t, NewFunction(), req)
				got = append(got, warningsOf(last))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// overLimit lists appNN.example.org, from..to, as left out over the
// listener limit.
func overLimit(from, to int) string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("app%02d.example.org (OverListenerLimit)", i))
	}
	return strings.Join(out, ", ")
}

// nsJSON is a namespace that publishes through tenant-root's Gateway.
func nsJSON(name string) string {
	return `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + name + `","labels":{"namespace.cozystack.io/gateway":"tenant-root"}}}`
}

// routeJSON is an HTTPRoute attached to tenant-root's Gateway.
func routeJSON(ns, name string, hostnames ...string) string {
	b, _ := json.Marshal(hostnames)
	return fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":%q,"namespace":%q},"spec":{"parentRefs":[{"name":"cozystack","namespace":"tenant-root"}],"hostnames":%s}}`, name, ns, b)
}
