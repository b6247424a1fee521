package fn

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
)

// Outcomes of a call, as the metrics label them. A call that waits is one
// iteration of Crossplane's requirement loop (see Calls per reconcile in
// docs/design.md).
const (
	OutcomeComposed            = "composed"
	OutcomeWaitingForResources = "waiting-for-resources"
	OutcomeWaitingForProbes    = "waiting-for-probes"
	OutcomeFatal               = "fatal"
)

// kindOther labels a call whose XR is of no kind the function composes, or
// could not be read.
const kindOther = "other"

// Metrics counts the function's calls on the metrics endpoint.
type Metrics struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics registers the function's metrics with r:
// function_tenant_gateway_calls_total{xr_kind,outcome} and
// function_tenant_gateway_call_duration_seconds{xr_kind}.
func NewMetrics(r prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "function_tenant_gateway_calls_total",
			Help: "RunFunction calls by composite kind and outcome: composed, waiting-for-resources or waiting-for-probes (one iteration of Crossplane's requirement loop each), fatal.",
		}, []string{"xr_kind", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "function_tenant_gateway_call_duration_seconds",
			Help: "Time spent in RunFunction, after the request is decoded, by composite kind.",
			// 1 ms to about 4 s: a child tenant's Gateway to 10,000 routes.
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 13),
		}, []string{"xr_kind"}),
	}
	for _, c := range []prometheus.Collector{m.calls, m.duration} {
		if err := r.Register(c); err != nil {
			return nil, fmt.Errorf("cannot register metrics: %w", err)
		}
	}
	return m, nil
}

// observe records one call.
func (m *Metrics) observe(kind string, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, d time.Duration) {
	if m == nil {
		return
	}
	m.calls.WithLabelValues(kind, outcome(req, rsp)).Inc()
	m.duration.WithLabelValues(kind).Observe(d.Seconds())
}

// outcome tells what a call answered: a Fatal result, requirements the
// request did not hold yet (probes alone, or anything else), or a
// composition.
func outcome(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) string {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return OutcomeFatal
		}
	}
	for name := range rsp.GetRequirements().GetSchemas() {
		if _, ok := request.GetRequiredSchema(req, name); !ok {
			return OutcomeWaitingForResources
		}
	}
	probes := false
	for name := range rsp.GetRequirements().GetResources() {
		if _, ok := req.GetRequiredResources()[name]; ok {
			continue
		}
		if !strings.HasPrefix(name, reqProbePrefix) {
			return OutcomeWaitingForResources
		}
		probes = true
	}
	if probes {
		return OutcomeWaitingForProbes
	}
	return OutcomeComposed
}
