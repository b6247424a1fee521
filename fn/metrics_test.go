package fn

import (
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/test/fake"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	r := &reconciler{function: NewFunction(WithMetrics(m)), Reconciler: fake.Reconciler{
		Cluster:   fake.Cluster{Served: v1TLSRoutes, Objects: objects(rootNamespace)},
		Bootstrap: shippedBootstrap(t),
		Request:   newRequest(t, `{"apex":"example.org"}`, nil, nil),
	}}
	r.reconcile(t)
	r.reconcile(t)
	calls := func(outcome string) float64 {
		return gathered(t, reg, "function_tenant_gateway_calls_total", map[string]string{"xr_kind": "TenantGateway", "outcome": outcome})
	}
	got := map[string]float64{}
	for _, o := range []string{OutcomeComposed, OutcomeWaitingForResources, OutcomeWaitingForProbes, OutcomeFatal} {
		got[o] = calls(o)
	}
	want := map[string]float64{
		// The first reconcile: namespaces, then routes, then probes, then
		// composed; the second composes in one call.
		OutcomeComposed: 2, OutcomeWaitingForResources: 2, OutcomeWaitingForProbes: 1, OutcomeFatal: 0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("function_tenant_gateway_calls_total{xr_kind=TenantGateway}: -want, +got:\n%s", diff)
	}
	if n := gathered(t, reg, "function_tenant_gateway_call_duration_seconds", map[string]string{"xr_kind": "TenantGateway"}); n != 5 {
		t.Errorf("call duration of TenantGateway counts %v calls, want 5", n)
	}
	if _, err := NewFunction(WithMetrics(m)).RunFunction(t.Context(), newRequest(t, `{"apex":42}`, nil, nil)); err != nil {
		t.Fatal(err)
	}
	if got := calls(OutcomeFatal); got != 1 {
		t.Errorf("a bad spec counted %v fatal calls, want 1", got)
	}
}

// TestGatewayMetricsFromRunFunction checks that the series report what the
// function composed: the Gateway's listeners and status.hostnames of the
// response.
func TestGatewayMetricsFromRunFunction(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	route := `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"www","namespace":"tenant-root"},"spec":{"parentRefs":[{"name":"cozystack","namespace":"tenant-root"}],"hostnames":["www.example.org","app.example.org","www.example.net"]}}`
	r := &reconciler{function: NewFunction(WithMetrics(m)), Reconciler: fake.Reconciler{
		Cluster:   fake.Cluster{Served: v1TLSRoutes, Objects: objects(rootNamespace, route)},
		Bootstrap: shippedBootstrap(t),
		Request:   newRequest(t, `{"apex":"example.org"}`, nil, nil),
	}}
	r.reconcile(t) // writes the order ledger's record, which the next orders on
	_, desired := r.reconcileState(t)
	gw := desired.GetResources()["gateway"].GetResource().AsMap()
	status := desired.GetComposite().GetResource().AsMap()["status"].(map[string]any)
	got := composition{namespace: "tenant-root", name: "cozystack",
		listeners: len(gw["spec"].(map[string]any)["listeners"].([]any)), hostnames: map[v1alpha1.HostnameState]int{}}
	for _, h := range status["hostnames"].([]any) {
		got.hostnames[v1alpha1.HostnameState(h.(map[string]any)["state"].(string))]++
	}
	want := composition{namespace: "tenant-root", name: "cozystack", listeners: 3,
		hostnames: map[v1alpha1.HostnameState]int{v1alpha1.HostnameListening: 2, v1alpha1.HostnameOutsideApex: 1}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(composition{})); diff != "" {
		t.Fatalf("the composition this test expects (http and two hostname listeners): -want, +got:\n%s", diff)
	}
	series := gatewaySeries(t, reg)
	d := `function_tenant_gateway_last_run_duration_seconds{xr_name="cozystack",xr_namespace="tenant-root"}`
	if series[d] <= 0 {
		t.Errorf("%s is %v, want the time of the composing call", d, series[d])
	}
	want.duration = time.Duration(series[d] * float64(time.Second))
	// Let's Encrypt's quota by default, and the two Certificates' orders.
	want.orders, want.orderLimit = 2, acme.LetsEncryptQuota.Limit
	if diff := cmp.Diff(want.series(t), series, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("-want, +got:\n%s", diff)
	}
	// A call that fails for the same TenantGateway keeps its last
	// composition.
	if _, err := NewFunction(WithMetrics(m)).RunFunction(t.Context(), newRequest(t, `{"apex":42}`, nil, nil)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(series, gatewaySeries(t, reg)); diff != "" {
		t.Errorf("a fatal call changed the series: -before, +after:\n%s", diff)
	}
	// And counts as a call of that TenantGateway.
	fatal := map[string]string{"xr_kind": v1alpha1.Kind, "xr_namespace": "tenant-root", "xr_name": "cozystack", "outcome": OutcomeFatal}
	if got := gathered(t, reg, "function_tenant_gateway_xr_calls_total", fatal); got != 1 {
		t.Errorf("function_tenant_gateway_xr_calls_total%v is %v after one fatal call, want 1", fatal, got)
	}
}

// gathered is the value of a counter, or the count of a histogram, of the
// series with the labels given, as the metrics endpoint serves it.
func gathered(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue series
				}
			}
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// xrdEnums reads the enums of status.hostnames[].state and
// status.childApexes[].state from the shipped XRD.
func xrdEnums(t *testing.T) (hostnames, childApexes []string) {
	t.Helper()
	b, err := os.ReadFile("../package/configuration/tenantgateway/definition.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var xrd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema struct {
						Properties struct {
							Status struct {
								Properties map[string]struct {
									Items struct {
										Properties struct {
											State struct {
												Enum []string `json:"enum"`
											} `json:"state"`
										} `json:"properties"`
									} `json:"items"`
								} `json:"properties"`
							} `json:"status"`
						} `json:"properties"`
					} `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &xrd); err != nil {
		t.Fatal(err)
	}
	status := xrd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties.Status.Properties
	return status["hostnames"].Items.Properties.State.Enum, status["childApexes"].Items.Properties.State.Enum
}

// TestMetricStatesAreTheXRDs keeps the states the metrics report equal to
// the states the API declares: a new state must get its series.
func TestMetricStatesAreTheXRDs(t *testing.T) {
	hostnames, childApexes := xrdEnums(t)
	if len(hostnames) == 0 || len(childApexes) == 0 {
		t.Fatalf("no state enums in the XRD: %v, %v", hostnames, childApexes)
	}
	got := func(states ...string) []string { return states }
	var h, c []string
	for _, s := range hostnameStates {
		h = append(h, string(s))
	}
	for _, s := range childApexStates {
		c = append(c, string(s))
	}
	sorted := cmpopts.SortSlices(func(a, b string) bool { return a < b })
	if diff := cmp.Diff(hostnames, got(h...), sorted); diff != "" {
		t.Errorf("hostname states: -XRD, +metrics:\n%s", diff)
	}
	if diff := cmp.Diff(childApexes, got(c...), sorted); diff != "" {
		t.Errorf("child apex states: -XRD, +metrics:\n%s", diff)
	}
}

// composition is what one call composed for a TenantGateway, as the
// metrics report it.
type composition struct {
	namespace, name      string
	listeners, conflicts int
	hostnames            map[v1alpha1.HostnameState]int
	childApexes          map[v1alpha1.ChildApexState]int
	duration             time.Duration
	orders, orderLimit   int
}

// series are the per-TenantGateway series a composition gives: every state
// of the XRD's enums, zero or not.
func (c composition) series(t *testing.T) map[string]float64 {
	t.Helper()
	hostnames, childApexes := xrdEnums(t)
	// Labels in name order, as the registry serves them.
	xr := `xr_name="` + c.name + `",xr_namespace="` + c.namespace + `"`
	out := map[string]float64{
		"function_tenant_gateway_listeners{" + xr + "}":                 float64(c.listeners),
		"function_tenant_gateway_conflicts{" + xr + "}":                 float64(c.conflicts),
		"function_tenant_gateway_last_run_duration_seconds{" + xr + "}": c.duration.Seconds(),
		"function_tenant_gateway_certificate_orders{" + xr + "}":        float64(c.orders),
		"function_tenant_gateway_certificate_order_limit{" + xr + "}":   float64(c.orderLimit),
	}
	for _, s := range hostnames {
		out["function_tenant_gateway_hostnames{state=\""+s+`",`+xr+"}"] = float64(c.hostnames[v1alpha1.HostnameState(s)])
	}
	for _, s := range childApexes {
		out["function_tenant_gateway_child_apexes{state=\""+s+`",`+xr+"}"] = float64(c.childApexes[v1alpha1.ChildApexState(s)])
	}
	return out
}

// gatewaySeries are the per-TenantGateway series the registry serves, by
// name and labels.
func gatewaySeries(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetType() != dto.MetricType_GAUGE {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			out[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = m.GetGauge().GetValue()
		}
	}
	return out
}

func TestGatewayMetrics(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	expiry := SeriesExpiryTTLs * DefaultTTL
	root := composition{namespace: "tenant-root", name: "cozystack", listeners: 57, conflicts: 2,
		hostnames:   map[v1alpha1.HostnameState]int{v1alpha1.HostnameListening: 56, v1alpha1.HostnameConflict: 2, v1alpha1.HostnameOverListenerLimit: 3},
		childApexes: map[v1alpha1.ChildApexState]int{v1alpha1.ChildApexListening: 1, v1alpha1.ChildApexOverCertificateLimit: 4},
		duration:    250 * time.Millisecond}
	rootLater := root
	rootLater.listeners, rootLater.conflicts, rootLater.duration = 2, 0, 10*time.Millisecond
	rootLater.hostnames = map[v1alpha1.HostnameState]int{v1alpha1.HostnameListening: 1}
	rootLater.childApexes = nil
	alice := composition{namespace: "tenant-alice", name: "alice", listeners: 1, duration: time.Millisecond}
	// A call at an offset from t0: composed is nil for a call that did not
	// compose (a wait or a Fatal result).
	type call struct {
		at       time.Duration
		composed *composition
	}
	cases := map[string]struct {
		reason string
		calls  []call
		// kept is how many TenantGateways the metrics hold before the
		// scrape.
		kept   int
		scrape time.Duration
		want   []composition
	}{
		"Composed": {
			reason: "A composing call gives its TenantGateway one series per metric and state",
			calls:  []call{{0, &root}},
			kept:   1,
			want:   []composition{root},
		},
		"LastCallWins": {
			reason: "The series are the last composition, not a sum",
			calls:  []call{{0, &root}, {time.Minute, &rootLater}},
			kept:   1,
			scrape: time.Minute,
			want:   []composition{rootLater},
		},
		"NotComposed": {
			reason: "A call that waits or fails composes nothing and reports nothing",
			calls:  []call{{0, nil}},
			kept:   0,
		},
		"WaitKeepsTheLastComposition": {
			reason: "A waiting call does not clear the last composition",
			calls:  []call{{0, &root}, {time.Minute, nil}},
			kept:   1,
			scrape: time.Minute,
			want:   []composition{root},
		},
		"JustBeforeExpiry": {
			reason: "A TenantGateway composed within the expiry keeps its series",
			calls:  []call{{0, &root}},
			kept:   1,
			scrape: expiry - time.Second,
			want:   []composition{root},
		},
		"Expired": {
			reason: "A TenantGateway not composed for the expiry (deleted, or served by another replica) loses every series",
			calls:  []call{{0, &root}, {time.Minute, &alice}},
			kept:   2,
			scrape: expiry,
			want:   []composition{alice},
		},
		"ExpiredWithoutScrape": {
			reason: "Calls sweep too (at most once an expiry), so that memory stays bounded when nobody scrapes",
			calls:  []call{{0, &root}, {expiry, &alice}},
			kept:   1,
			scrape: expiry,
			want:   []composition{alice},
		},
		"RecomposedAfterExpiry": {
			reason: "A TenantGateway composed again after expiring reports again",
			calls:  []call{{0, &root}, {2 * expiry, &rootLater}},
			kept:   1,
			scrape: 2 * expiry,
			want:   []composition{rootLater},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			now := t0
			reg, m := clockedMetrics(t, &now)
			for _, c := range tc.calls {
				now = t0.Add(c.at)
				var run gatewayRun
				d := time.Millisecond
				if c.composed != nil {
					run.composed(c.composed.namespace, c.composed.name, &gateway.Output{
						Listeners: c.composed.listeners, ConflictCount: c.composed.conflicts,
						HostnameStates: c.composed.hostnames, ChildApexStates: c.composed.childApexes,
					})
					d = c.composed.duration
				}
				m.observe(v1alpha1.Kind, &fnv1.RunFunctionRequest{}, &fnv1.RunFunctionResponse{}, &run, d)
			}
			if n := len(m.gateways.snapshots); n != tc.kept {
				t.Errorf("%s: %d TenantGateways held before the scrape, want %d", tc.reason, n, tc.kept)
			}
			now = t0.Add(tc.scrape)
			want := map[string]float64{}
			for _, c := range tc.want {
				maps.Copy(want, c.series(t))
			}
			if diff := cmp.Diff(want, gatewaySeries(t, reg)); diff != "" {
				t.Errorf("%s: -want, +got:\n%s", tc.reason, diff)
			}
			lintMetrics(t, reg)
		})
	}
}

// TestXRCallMetrics checks the calls of each XR by outcome: counted
// whatever the call answered, for the kinds the function composes, and gone
// once the XR is not called for the expiry.
func TestXRCallMetrics(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	expiry := SeriesExpiryTTLs * DefaultTTL
	root := xrKey{kind: v1alpha1.Kind, xr: types.NamespacedName{Namespace: "tenant-root", Name: "cozystack"}}
	alice := xrKey{kind: v1alpha1.Kind, xr: types.NamespacedName{Namespace: "tenant-alice", Name: "alice"}}
	tenant := xrKey{kind: "XTenant", xr: types.NamespacedName{Name: "alice-x7k2p"}}
	fatal := &fnv1.RunFunctionResponse{Results: []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL}}}
	type call struct {
		at  time.Duration
		xr  xrKey // zero: a call of no XR the function composes
		rsp *fnv1.RunFunctionResponse
	}
	// counts are the calls of one TenantGateway by outcome.
	type counts map[string]float64
	cases := map[string]struct {
		reason string
		calls  []call
		scrape time.Duration
		want   map[xrKey]counts
	}{
		"ByOutcome": {
			reason: "Every call of a TenantGateway counts under its outcome; every outcome is served, zero included",
			calls:  []call{{0, root, &fnv1.RunFunctionResponse{}}, {time.Second, root, &fnv1.RunFunctionResponse{}}, {2 * time.Second, root, fatal}},
			want:   map[xrKey]counts{root: {OutcomeComposed: 2, OutcomeFatal: 1}},
		},
		"PerTenantGateway": {
			reason: "Each TenantGateway has series of its own",
			calls:  []call{{0, root, &fnv1.RunFunctionResponse{}}, {0, alice, &fnv1.RunFunctionResponse{}}},
			want:   map[xrKey]counts{root: {OutcomeComposed: 1}, alice: {OutcomeComposed: 1}},
		},
		"Tenant": {
			reason: "A Tenant's XR, cluster-scoped, has series of its own without a namespace",
			calls:  []call{{0, tenant, &fnv1.RunFunctionResponse{}}},
			want:   map[xrKey]counts{tenant: {OutcomeComposed: 1}},
		},
		"NoXR": {
			reason: "A call of no XR the function composes (or whose XR cannot be read) has no per-XR series",
			calls:  []call{{0, xrKey{}, &fnv1.RunFunctionResponse{}}},
			want:   map[xrKey]counts{},
		},
		"Expired": {
			reason: "A TenantGateway not called for the expiry loses its series",
			calls:  []call{{0, root, &fnv1.RunFunctionResponse{}}, {time.Minute, alice, &fnv1.RunFunctionResponse{}}},
			scrape: expiry,
			want:   map[xrKey]counts{alice: {OutcomeComposed: 1}},
		},
		"FailingCallsKeepTheSeries": {
			reason: "A call that composes nothing still keeps the TenantGateway's calls from expiring",
			calls:  []call{{0, root, &fnv1.RunFunctionResponse{}}, {expiry - time.Second, root, fatal}},
			scrape: expiry + time.Minute,
			want:   map[xrKey]counts{root: {OutcomeComposed: 1, OutcomeFatal: 1}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			now := t0
			reg, m := clockedMetrics(t, &now)
			for _, c := range tc.calls {
				now = t0.Add(c.at)
				var run gatewayRun
				if c.xr.kind != "" {
					run.called(c.xr.kind, c.xr.xr.Namespace, c.xr.xr.Name)
				}
				m.observe(v1alpha1.Kind, &fnv1.RunFunctionRequest{}, c.rsp, &run, time.Millisecond)
			}
			now = t0.Add(tc.scrape)
			want := map[string]float64{}
			for xr, n := range tc.want {
				for _, o := range outcomes {
					want[xr.kind+"/"+xr.xr.Namespace+"/"+xr.xr.Name+" "+o] = n[o]
				}
			}
			families, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, f := range families {
				if f.GetName() != "function_tenant_gateway_xr_calls_total" {
					continue
				}
				for _, s := range f.GetMetric() {
					l := map[string]string{}
					for _, p := range s.GetLabel() {
						l[p.GetName()] = p.GetValue()
					}
					got[l["xr_kind"]+"/"+l["xr_namespace"]+"/"+l["xr_name"]+" "+l["outcome"]] = s.GetCounter().GetValue()
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: -want, +got:\n%s", tc.reason, diff)
			}
			lintMetrics(t, reg)
		})
	}
}

// clockedMetrics are metrics registered with a registry of their own, on
// the clock *now.
func clockedMetrics(t *testing.T, now *time.Time) (*prometheus.Registry, *Metrics) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, WithMetricsClock(func() time.Time { return *now }))
	if err != nil {
		t.Fatal(err)
	}
	return reg, m
}

// lintMetrics fails on what Prometheus' linter finds in the registry's
// metrics (names, help, units).
func lintMetrics(t *testing.T, reg *prometheus.Registry) {
	t.Helper()
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("metric lint: %v", problems)
	}
}
