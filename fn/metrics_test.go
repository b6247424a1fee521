package fn

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

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
