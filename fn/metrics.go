package fn

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
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

// SeriesExpiryTTLs is how many TTLs the series of a TenantGateway outlive
// its last composing call: the function is not called when an XR is
// deleted, and Crossplane calls each XR at least once a TTL (plus 10%
// jitter) while it exists. See Metrics in docs/design.md.
const SeriesExpiryTTLs = 5

// Metrics counts the function's calls, and reports each TenantGateway's
// last composition, on the metrics endpoint.
type Metrics struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	gateways *gatewayCollector
}

// A MetricsOption configures Metrics.
type MetricsOption func(*Metrics)

// WithSeriesExpiry sets how long the series of a TenantGateway outlive the
// last call that composed it; SeriesExpiryTTLs times the TTL.
func WithSeriesExpiry(d time.Duration) MetricsOption {
	return func(m *Metrics) { m.gateways.expiry = d }
}

// WithMetricsClock sets the clock the series expire by.
func WithMetricsClock(now func() time.Time) MetricsOption {
	return func(m *Metrics) { m.gateways.now = now }
}

// NewMetrics registers the function's metrics with r:
// function_tenant_gateway_calls_total{xr_kind,outcome},
// function_tenant_gateway_call_duration_seconds{xr_kind}, and the series of
// each TenantGateway (see gatewayCollector).
func NewMetrics(r prometheus.Registerer, o ...MetricsOption) (*Metrics, error) {
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
		gateways: newGatewayCollector(),
	}
	for _, fn := range o {
		fn(m)
	}
	for _, c := range []prometheus.Collector{m.calls, m.duration, m.gateways} {
		if err := r.Register(c); err != nil {
			return nil, fmt.Errorf("cannot register metrics: %w", err)
		}
	}
	return m, nil
}

// observe records one call, and what it composed for a TenantGateway.
func (m *Metrics) observe(kind string, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, composed *gatewayRun, d time.Duration) {
	if m == nil {
		return
	}
	o := outcome(req, rsp)
	m.calls.WithLabelValues(kind, o).Inc()
	m.duration.WithLabelValues(kind).Observe(d.Seconds())
	if composed.kind != "" {
		m.gateways.call(xrKey{kind: composed.kind, xr: composed.xr}, o)
	}
	if composed.out != nil {
		m.gateways.record(composed.xr, composed.out, d)
	}
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
	probes := false
	for _, name := range unanswered(req, rsp) {
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

// A gatewayRun is the XR a call was for, if of a kind the function
// composes, and what it composed for a TenantGateway: nothing unless the
// call answered a composition.
type gatewayRun struct {
	kind string
	xr   types.NamespacedName
	out  *gateway.Output
}

// called keeps which XR a call was for.
func (r *gatewayRun) called(kind, namespace, name string) {
	r.kind, r.xr = kind, types.NamespacedName{Namespace: namespace, Name: name}
}

// composed keeps what a call composed for the metrics.
func (r *gatewayRun) composed(namespace, name string, out *gateway.Output) {
	r.xr, r.out = types.NamespacedName{Namespace: namespace, Name: name}, out
}

// The states a TenantGateway's series report, every one each time (zero
// included), so that the series of one TenantGateway are a fixed set. A test
// keeps them equal to the enums of the XRD.
var (
	hostnameStates = []v1alpha1.HostnameState{
		v1alpha1.HostnameListening, v1alpha1.HostnameCovered, v1alpha1.HostnamePassthrough,
		v1alpha1.HostnameConflict, v1alpha1.HostnameOutsideApex, v1alpha1.HostnameNotDelegated,
		v1alpha1.HostnameInvalid, v1alpha1.HostnameNoMatchingParent, v1alpha1.HostnameOverListenerLimit, v1alpha1.HostnameOverCertificateLimit, v1alpha1.HostnameWaiting,
	}
	// outcomes are those of function_tenant_gateway_calls_total.
	outcomes        = []string{OutcomeComposed, OutcomeWaitingForResources, OutcomeWaitingForProbes, OutcomeFatal}
	childApexStates = []v1alpha1.ChildApexState{
		v1alpha1.ChildApexListening, v1alpha1.ChildApexIdle, v1alpha1.ChildApexWaiting, v1alpha1.ChildApexOutsideApex, v1alpha1.ChildApexOverListenerLimit,
		v1alpha1.ChildApexOverCertificateLimit, v1alpha1.ChildApexInvalid,
	}
)

// A gatewaySnapshot is the last composition of one TenantGateway this
// replica answered.
type gatewaySnapshot struct {
	seen        time.Time
	listeners   int
	conflicts   int
	hostnames   map[v1alpha1.HostnameState]int
	childApexes map[v1alpha1.ChildApexState]int
	duration    time.Duration
	orders      int
	orderLimit  int
}

// An xrKey names one XR: a TenantGateway, or an XTenant (cluster-scoped:
// no namespace).
type xrKey struct {
	kind string
	xr   types.NamespacedName
}

// xrCalls counts one XR's calls by outcome.
type xrCalls struct {
	seen     time.Time
	outcomes map[string]uint64
}

// gatewayCollector serves one fixed set of series per TenantGateway
// composed within the expiry: 1 + 1 + 1 + 11 + 7 + 2 = 23 (see Metrics in
// docs/design.md), and 4 more, its calls by outcome, per XR (TenantGateway
// or XTenant) called within the expiry: a platform of N Tenants with a
// TenantGateway each has at most 27N. Series are built at scrape time from
// the snapshots, so that an expired XR's series all go at once. The calls
// of one XR are a counter that starts again from zero when it expires,
// which Prometheus' rate() reads as a counter reset.
type gatewayCollector struct {
	now    func() time.Time
	expiry time.Duration

	listeners, hostnames, conflicts, childApexes, duration, orders, orderLimit, calls *prometheus.Desc

	mu        sync.Mutex
	snapshots map[types.NamespacedName]gatewaySnapshot
	counts    map[xrKey]xrCalls
	swept     time.Time
}

func newGatewayCollector() *gatewayCollector {
	xr := []string{"xr_namespace", "xr_name"}
	withState := []string{"xr_namespace", "xr_name", "state"}
	return &gatewayCollector{
		now:    time.Now,
		expiry: SeriesExpiryTTLs * DefaultTTL,
		listeners: prometheus.NewDesc("function_tenant_gateway_listeners",
			fmt.Sprintf("Listeners on the TenantGateway's Gateway, of the Gateway API's %d.", gateway.MaxListeners), xr, nil),
		hostnames: prometheus.NewDesc("function_tenant_gateway_hostnames",
			"Hostname claims (a hostname and the route asking for it, as in status.hostnames, uncut) by state.", withState, nil),
		conflicts: prometheus.NewDesc("function_tenant_gateway_conflicts",
			"Hostnames claimed from more than one namespace (status.conflictCount).", xr, nil),
		childApexes: prometheus.NewDesc("function_tenant_gateway_child_apexes",
			"Inheriting child apexes by state; OverListenerLimit and OverCertificateLimit are those left out.", withState, nil),
		duration: prometheus.NewDesc("function_tenant_gateway_last_run_duration_seconds",
			"Time in RunFunction of the last call that composed the TenantGateway.", xr, nil),
		orders: prometheus.NewDesc("function_tenant_gateway_certificate_orders",
			"ACME orders of the window in the ledger of the TenantGateway's registered domain, as its last composing call read and added to it (every TenantGateway of the domain reports the same ledger: aggregate with max by the domain's apex, never sum).", xr, nil),
		orderLimit: prometheus.NewDesc("function_tenant_gateway_certificate_order_limit",
			"The order quota of the TenantGateway's registered domain in force (platform setting gateway.certificateOrders); 0 is no bound.", xr, nil),
		calls: prometheus.NewDesc("function_tenant_gateway_xr_calls_total",
			"RunFunction calls of one XR (a TenantGateway, or an XTenant with no namespace) by outcome, as function_tenant_gateway_calls_total counts them by kind.", []string{"xr_kind", "xr_namespace", "xr_name", "outcome"}, nil),
		snapshots: map[types.NamespacedName]gatewaySnapshot{},
		counts:    map[xrKey]xrCalls{},
	}
}

// call counts one call of an XR.
func (c *gatewayCollector) call(xr xrKey, outcome string) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.counts[xr]
	if n.outcomes == nil {
		n.outcomes = map[string]uint64{}
	}
	n.seen = now
	n.outcomes[outcome]++
	c.counts[xr] = n
	if now.Sub(c.swept) >= c.expiry {
		c.sweep(now)
	}
}

// record keeps the last composition of a TenantGateway.
func (c *gatewayCollector) record(xr types.NamespacedName, out *gateway.Output, d time.Duration) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.snapshots[xr] = gatewaySnapshot{
		seen:        now,
		listeners:   out.Listeners,
		conflicts:   out.ConflictCount,
		hostnames:   out.HostnameStates,
		childApexes: out.ChildApexStates,
		duration:    d,
		orders:      out.OrdersUsed,
		orderLimit:  out.OrderQuota.Limit,
	}
	// Sweep here too, at most once an expiry, so that memory stays bounded
	// when nobody scrapes.
	if now.Sub(c.swept) >= c.expiry {
		c.sweep(now)
	}
}

// sweep forgets the TenantGateways not composed, and the XRs not called,
// within the expiry. The caller holds mu.
func (c *gatewayCollector) sweep(now time.Time) {
	for xr, s := range c.snapshots {
		if now.Sub(s.seen) >= c.expiry {
			delete(c.snapshots, xr)
		}
	}
	for xr, n := range c.counts {
		if now.Sub(n.seen) >= c.expiry {
			delete(c.counts, xr)
		}
	}
	c.swept = now
}

// Describe sends the descriptors of every series.
func (c *gatewayCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.listeners, c.hostnames, c.conflicts, c.childApexes, c.duration, c.orders, c.orderLimit, c.calls} {
		ch <- d
	}
}

// Collect sends the series of every TenantGateway composed within the
// expiry. The snapshots are copied out first, so that calls do not wait on
// a scrape.
func (c *gatewayCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	c.sweep(c.now())
	xrs := make([]types.NamespacedName, 0, len(c.snapshots))
	snapshots := make([]gatewaySnapshot, 0, len(c.snapshots))
	for xr, s := range c.snapshots {
		xrs, snapshots = append(xrs, xr), append(snapshots, s)
	}
	type called struct {
		xr       xrKey
		outcomes map[string]uint64
	}
	calls := make([]called, 0, len(c.counts))
	for xr, n := range c.counts {
		calls = append(calls, called{xr: xr, outcomes: maps.Clone(n.outcomes)})
	}
	c.mu.Unlock()
	for _, n := range calls {
		for _, o := range outcomes {
			m, err := prometheus.NewConstMetric(c.calls, prometheus.CounterValue, float64(n.outcomes[o]), n.xr.kind, n.xr.xr.Namespace, n.xr.xr.Name, o)
			if err != nil {
				m = prometheus.NewInvalidMetric(c.calls, err)
			}
			ch <- m
		}
	}
	for i, s := range snapshots {
		gauge := func(d *prometheus.Desc, v float64, state ...string) {
			m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, append([]string{xrs[i].Namespace, xrs[i].Name}, state...)...)
			if err != nil {
				m = prometheus.NewInvalidMetric(d, err)
			}
			ch <- m
		}
		gauge(c.listeners, float64(s.listeners))
		gauge(c.conflicts, float64(s.conflicts))
		gauge(c.duration, s.duration.Seconds())
		gauge(c.orders, float64(s.orders))
		gauge(c.orderLimit, float64(s.orderLimit))
		for _, st := range hostnameStates {
			gauge(c.hostnames, float64(s.hostnames[st]), string(st))
		}
		for _, st := range childApexStates {
			gauge(c.childApexes, float64(s.childApexes[st]), string(st))
		}
	}
}
