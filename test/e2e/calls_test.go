//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The function's pod: up.sh runs the Deployment Crossplane creates for it
// in a network namespace of its own with this IP (FN_POD_IP), and the
// function listens where that Deployment says: gRPC on 9443, metrics on
// 8080.
const (
	functionPodIP   = "10.244.0.2"
	functionGRPC    = functionPodIP + ":9443"
	functionMetrics = "http://" + functionPodIP + ":8080/metrics"
)

// Bounds of what one route change may cost, on average over 20, the
// TenantGateway whose routes changed, in calls (see Calls per reconcile in
// docs/design.md; every reconcile of it that composes calls the function
// at least once, so the bound holds its reconciles too). At most 4 calls
// for a change the function's output does not depend on; a change of
// listeners costs more, in reconciles on the events of Crossplane's own
// writes, and is held at twice that. Counts, not times; a loaded machine adds some (Crossplane
// re-writes conditions from a stale cache), so the bounds leave room above
// what a quiet machine costs.
var maxPerChange = map[string]float64{"create": 8, "change": 4, "delete": 8}

// TestCallsPerRouteChange measures what a route change costs where it
// happens: 20 HTTPRoutes created, changed (a backend port: nothing the
// function reads) and deleted one at a time in the attached namespace of
// tenant-calls, each change waited out (its listener in the Gateway, or the
// route's status from Envoy Gateway, then no call of it and no write of it
// for half a second). It counts the function's calls per TenantGateway
// from the function's own counter of them
// (function_tenant_gateway_xr_calls_total, polled: when a call is seen is
// known to the polling period), reads Crossplane's circuit breaker of the
// XR from the XR's Responsive condition, and records the events of every
// object the TenantGateway composes or requires, by who wrote what.
// Crossplane counts its reconciles per controller only, over every test's
// TenantGateways: the test logs that count and bounds the XR's calls. It
// fails when:
//   - a change in tenant-calls' namespace re-runs tenant-calls-b's
//     TenantGateway: every run of it in the window must be its TTL's
//     requeue, at least 0.9 TTL after the one before (Crossplane jitters
//     the TTL by 10%, and a slow machine only delays runs), or follow an
//     event of an object it composes or requires (since shortly before
//     the previous run: an event during a reconcile queues one more);
//   - a change costs more calls on average than maxPerChange (at both
//     settings), or no more than the TTL's requeues alone while
//     Crossplane's circuit breaker stayed closed;
//   - with Crossplane's raised breaker, the breaker opened;
//   - a route's listener reached the Gateway later than oneTTL after the
//     change (at the defaults the breaker drops the change's events and
//     the TTL's requeue applies it);
//   - a change the function's output does not depend on (the backend port)
//     writes anything the TenantGateway composes, or its status (but for
//     Crossplane's Responsive condition, its breaker's state), once the
//     TenantGateway has run on the creations' last events.
func TestCallsPerRouteChange(t *testing.T) {
	t.Parallel()
	const routes = 20
	const a, b, apps = "tenant-calls", "tenant-calls-b", "tenant-calls-apps"
	ttl := functionTTL(t)
	tenantNamespaces(t, a, "calls.example", nil)
	tenantNamespaces(t, b, "calls-b.example", nil)
	namespace(t, apps, map[string]string{"namespace.cozystack.io/host": "calls.example", "namespace.cozystack.io/gateway": a})
	// From before the TenantGateways' first calls, so that the run of
	// tenant-calls-b before the window is known.
	calls := sampleCalls(t, a, b)
	apply(t, envoyTenantGateway(a, "calls.example"))
	apply(t, envoyTenantGateway(b, "calls-b.example"))
	apply(t, httpRoute(b, "www", b, "cozystack", "www.calls-b.example"))
	for _, ns := range []string{a, b} {
		eventually(t, oneTTL+settle, "Gateway "+ns+"/cozystack Accepted by Envoy Gateway", func() (bool, string) {
			gw, _ := get(t, gvkGateway, ns, "cozystack")
			s, r, _ := condition(gw, "Accepted")
			return s == "True", fmt.Sprintf("%s %s", s, r)
		})
	}
	// Both settled: tenant-calls-b's own events (its route, Envoy Gateway's
	// status) are over before the window opens.
	quiet(t, 3*time.Second, "the TenantGateways of "+a+" and "+b, xrActivity(t, calls, a, b))
	events, eventsB := watchTracked(t, a, apps), watchTracked(t, b, b)
	metricsBefore := scrapeCalls(t)
	windowStart := time.Now()
	bBefore := lastBefore(calls.runsOf(b), windowStart)

	host := func(i int) string { return fmt.Sprintf("r%02d.calls.example", i) }
	route := func(i, port int) string {
		return strings.Replace(httpRoute(apps, fmt.Sprintf("r%02d", i), a, "cozystack", host(i)), "port: 80", fmt.Sprintf("port: %d", port), 1)
	}
	var phases []phase
	created, deleted := map[string]time.Duration{}, map[string]time.Duration{}
	run := func(name string, change func(i int) (done func(gw *unstructured.Unstructured) bool, lat map[string]time.Duration)) {
		p := phase{name: name, start: time.Now(), calls: calls.counts(a), callsB: calls.total(b), xp: scrapeComposite(t)}
		for i := range routes {
			start := time.Now()
			done, lat := change(i)
			for {
				gw, _ := get(t, gvkGateway, a, "cozystack")
				if done(gw) {
					break
				}
				if time.Since(start) > oneTTL+settle {
					t.Fatalf("%s r%02d: not seen after %s; Gateway listeners %v", name, i, oneTTL+settle, listeners(gw))
				}
				time.Sleep(50 * time.Millisecond)
			}
			if lat != nil {
				lat[host(i)] = time.Since(start)
			}
			quiet(t, 500*time.Millisecond, "the TenantGateway of "+a, xrActivity(t, calls, a))
		}
		p.end, p.callsEnd, p.callsBEnd, p.xpEnd = time.Now(), calls.counts(a), calls.total(b), scrapeComposite(t)
		phases = append(phases, p)
	}
	run("create", func(i int) (func(*unstructured.Unstructured) bool, map[string]time.Duration) {
		apply(t, route(i, 80))
		return func(gw *unstructured.Unstructured) bool { return listenerFor(gw, host(i)) != "" }, created
	})
	// The creations' last writes (Envoy Gateway's status of the Gateway's
	// latest generation, Crossplane's of the XR) are over before the
	// versions are taken.
	eventually(t, settle, "Gateway "+a+"/cozystack status of its latest generation", func() (bool, string) {
		gw, _ := get(t, gvkGateway, a, "cozystack")
		for _, c := range slice(gw, "status", "conditions") {
			if m, _ := c.(map[string]any); m["type"] == "Programmed" {
				g, _ := m["observedGeneration"].(int64)
				return g == gw.GetGeneration(), fmt.Sprintf("observedGeneration %d of %d", g, gw.GetGeneration())
			}
		}
		return false, "no Programmed condition"
	})
	// And the TenantGateway has run on all of it: a call that began after
	// the last event of what it composes or requires, with its status of
	// its current generation. With Crossplane's raised breaker the run the
	// last event queued is that call; at Crossplane's defaults the breaker,
	// open by now, dropped that event and the call is the TTL's requeue.
	// Without this wait that run lands in the backend-port phase and its
	// status write looks like one a port change caused (the defaults pass
	// failed so on its first run: GatewayReady's message, status.listeners
	// and observedGeneration written there).
	caughtUp(t, events, calls, a)
	quiet(t, 3*time.Second, "the TenantGateway of "+a, xrActivity(t, calls, a))
	composedBefore := composedVersions(t, a)
	xrBefore, _ := get(t, gvkTenantGateway, a, "cozystack")
	run("change", func(i int) (func(*unstructured.Unstructured) bool, map[string]time.Duration) {
		apply(t, route(i, 8080))
		name := fmt.Sprintf("r%02d", i)
		return func(*unstructured.Unstructured) bool {
			// Envoy Gateway has seen the change: the route's status is of
			// its new generation.
			rt, _ := get(t, gvkHTTPRoute, apps, name)
			return rt != nil && routeObservedGeneration(rt) == rt.GetGeneration()
		}, nil
	})
	composedAfter := composedVersions(t, a)
	xrAfter, _ := get(t, gvkTenantGateway, a, "cozystack")
	if c := crossplaneOnlyChange(xrBefore, xrAfter); c != "" {
		// Crossplane writes its circuit breaker's state into the XR's
		// Responsive condition on the run after the breaker opens or
		// closes, whatever the function returns: not a write of the
		// function's output. At its defaults the breaker closes five
		// minutes after it opened, which may fall in this phase.
		t.Logf("change: Crossplane rewrote the TenantGateway's %s; nothing the function writes changed", c)
		composedAfter["TenantGateway/cozystack"] = composedBefore["TenantGateway/cozystack"]
	}
	if diff := diffVersions(composedBefore, composedAfter); diff != "" {
		t.Errorf("20 changes of a backend port, which nothing the function composes depends on, wrote: %s%s", diff, xrDiff(xrBefore, xrAfter))
	}
	run("delete", func(i int) (func(*unstructured.Unstructured) bool, map[string]time.Duration) {
		remove(t, route(i, 8080))
		return func(gw *unstructured.Unstructured) bool { return listenerFor(gw, host(i)) == "" }, deleted
	})
	metricsAfter := scrapeCalls(t)
	evs, evsB := events.stop(), eventsB.stop()
	runsB := calls.stop(t)[b]

	t.Logf("function --ttl=%s, %s; %d HTTPRoutes in %s, one change at a time", ttl, crossplaneSettings(), routes, apps)
	for _, p := range phases {
		byOutcome := p.callsEnd.minus(p.calls)
		n := int(p.callsEnd.total() - p.calls.total())
		perCall := float64(n) / routes
		what, tokens := evs.during(p.start, p.end)
		t.Logf("%s: %d calls of %s/cozystack (%.2f per change; %s), %v calls of %s/cozystack, in %s; events of what it composes or requires: %s; %.1f circuit breaker tokens per change; every TenantGateway's, from Crossplane's metrics: %s",
			p.name, n, a, perCall, byOutcome, p.callsBEnd-p.callsB, b, p.end.Sub(p.start).Round(time.Second), what, float64(tokens)/routes, p.xpEnd.minus(p.xp))
		// Whether Crossplane reconciled the XR with its circuit breaker
		// open in the phase (it writes that into the XR's Responsive
		// condition): from then on it drops the XR's watch events but one
		// per 30 s, and changes wait for the TTL's requeue.
		open := evs.breakerOpen(p.start, p.end)
		switch {
		case crossplaneDefaults():
			// Crossplane at its defaults (make e2e's defaults pass): the
			// breaker (100 tokens, 1 a second) opens after about five new
			// hostnames at some 20 tokens each, and stays open five minutes.
			t.Logf("%s: Crossplane's circuit breaker of %s/cozystack open in the phase: %t (its defaults)", p.name, a, open)
		case open:
			t.Errorf("%s: Crossplane reconciled %s/cozystack with its circuit breaker open (its Responsive condition False): changes waited for the TTL and the counts are not per change", p.name, a)
		}
		// Upper bounds hold at both settings: the breaker only drops
		// reconciles, and the TTL's requeues it leaves add one run per
		// 0.9 TTL of the phase, about one per change when every change
		// waits for one, as at Crossplane's defaults once the breaker is
		// open.
		if limit := maxPerChange[p.name]; perCall > limit {
			t.Errorf("%s: %.2f calls per route change; at most %.0f expected", p.name, perCall, limit)
		}
		// A change made while the XR's reconcile is queued or running is
		// merged into the next one (controller-runtime's queue holds a key
		// once), which a loaded machine shows in the change phase, whose
		// changes wait only for Envoy Gateway: how many runs the changes
		// get depends on how long a reconcile takes. Unwatched changes
		// would be met by the TTL's requeues alone, one per 0.9 TTL of the
		// phase at most. That is what an open breaker does, by design;
		// with it closed, more runs than the TTL gives are the changes'.
		ttlOnly := int(p.end.Sub(p.start)/(ttl*9/10)) + 1
		if n <= ttlOnly && !open {
			t.Errorf("%s: %d calls for %d changes in %s, no more than the TTL's requeues alone (%d), with the circuit breaker closed: a change that runs no reconcile is not watched, or the calls are not counted right", p.name, n, routes, p.end.Sub(p.start).Round(time.Second), ttlOnly)
		}
	}
	// Every change reached its Gateway within one TTL and Crossplane's
	// queueing (oneTTL), not only within the wait's oneTTL+settle: with the
	// breaker open the TTL's requeue is what applies a change, so the
	// function's TTL bounds what the breaker costs.
	for what, lat := range map[string]map[string]time.Duration{"created": created, "deleted": deleted} {
		for h, d := range lat {
			if d > oneTTL {
				t.Errorf("route %s %s: its listener change reached the Gateway after %s, more than one TTL and Crossplane's queueing (%s)", h, what, d.Round(100*time.Millisecond), oneTTL)
			}
		}
	}
	t.Logf("route -> listener in the Gateway: created %s; deleted -> listener gone %s", quantiles(created), quantiles(deleted))
	t.Logf("function_tenant_gateway_calls_total{xr_kind=\"TenantGateway\"} rose by %v over the window (every test's TenantGateways)", metricsAfter.minus(metricsBefore))

	// tenant-calls-b lists routes only in its own namespaces: it runs on its
	// TTL, or on an event of its own objects (Crossplane's and Envoy
	// Gateway's writes after its own runs), never on tenant-calls' changes.
	// An event that arrives while a reconcile of it is in flight (between
	// Crossplane's dequeue and the function's call, or during the call)
	// queues one more: its run follows the previous one closely, and the
	// event was seen just before that previous call. Such an event explains
	// the next run too, so the window looks back inFlight before the
	// previous call (an EnvironmentConfig another test adds and deletes
	// gives two runs well under a second apart).
	const inFlight = 2 * time.Second
	// A run's time is when the poll saw its call counted, up to
	// callPollPeriod late, the same for every run.
	prev := bBefore
	callsB := afterOrAt(runsB, windowStart)
	for _, c := range callsB {
		if !prev.IsZero() && c.Sub(prev) < ttl*9/10-time.Second/2 {
			what, _ := evsB.during(prev.Add(-inFlight), c)
			if what == "" {
				t.Errorf("%s/cozystack ran %s after its previous run, before its TTL (%s), with no event of its own in between: a change in %s re-ran it; its runs in the window: %v", b, c.Sub(prev).Round(time.Millisecond), ttl, apps, callsB)
				break
			}
			t.Logf("%s/cozystack ran %s after its previous run, on events of its own: %s", b, c.Sub(prev).Round(time.Millisecond), what)
		}
		prev = c
	}
}

// caughtUp waits until ns's TenantGateway has run on everything it
// composes or requires as it is now: a call of it counted at least 2 s
// after the last event of those objects (its own excluded: its runs write
// it), which leaves room for Crossplane's reading of them before the call
// on a loaded machine, and its status.observedGeneration at its current
// generation (Crossplane's write of its resource references raises the
// generation after the run that composed them).
func caughtUp(t *testing.T, events *trackedEvents, calls *callSampler, ns string) {
	t.Helper()
	// The poll sees a call up to one period after it was counted.
	const margin = 2*time.Second + callPollPeriod
	eventually(t, oneTTL+settle, "TenantGateway "+ns+"/cozystack run on the last event of what it composes or requires", func() (bool, string) {
		last := events.lastExcept("TenantGateway ")
		runs := calls.runsOf(ns)
		xr, _ := get(t, gvkTenantGateway, ns, "cozystack")
		og, _, _ := unstructured.NestedInt64(xr.Object, "status", "observedGeneration")
		ran := len(runs) > 0 && runs[len(runs)-1].After(last.Add(margin))
		return ran && og == xr.GetGeneration(), fmt.Sprintf("last event %s, last call seen %v, status.observedGeneration %d of %d",
			last.Format(time.RFC3339Nano), runs[max(0, len(runs)-1):], og, xr.GetGeneration())
	})
}

// crossplaneOnlyChange names what Crossplane alone changed in an XR between
// two reads, "" when anything else changed (or nothing did): only its
// Responsive condition, the circuit breaker's state, and the metadata a
// status write touches.
func crossplaneOnlyChange(before, after *unstructured.Unstructured) string {
	if before == nil || after == nil || before.GetResourceVersion() == after.GetResourceVersion() {
		return ""
	}
	if xrDiff(before, after) != "" {
		return ""
	}
	sb, rb, _ := condition(before, "Responsive")
	s, r, _ := condition(after, "Responsive")
	if sb == s && rb == r {
		return "metadata (resourceVersion " + before.GetResourceVersion() + " -> " + after.GetResourceVersion() + ")"
	}
	return fmt.Sprintf("Responsive condition (%s %s -> %s %s)", sb, rb, s, r)
}

// xrDiff names what changed in an XR besides Crossplane's Responsive
// condition and resourceVersion and managedFields: its spec, labels,
// annotations, and status.
func xrDiff(before, after *unstructured.Unstructured) string {
	if before == nil || after == nil {
		return ""
	}
	strip := func(u *unstructured.Unstructured) map[string]any {
		c := u.DeepCopy()
		var conds []any
		for _, cd := range slice(c, "status", "conditions") {
			if m, _ := cd.(map[string]any); m["type"] != "Responsive" {
				conds = append(conds, cd)
			}
		}
		if conds != nil {
			_ = unstructured.SetNestedSlice(c.Object, conds, "status", "conditions")
		}
		return map[string]any{"spec": c.Object["spec"], "labels": c.GetLabels(), "annotations": c.GetAnnotations(), "status": c.Object["status"]}
	}
	b, a := strip(before), strip(after)
	var changed []string
	for _, k := range unionKeys(b, a) {
		if !equality.Semantic.DeepEqual(b[k], a[k]) {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 {
		return ""
	}
	return fmt.Sprintf("; the TenantGateway's %s changed: %s", strings.Join(changed, ", "), changeOf(watch.Modified, before, after))
}

type phase struct {
	name              string
	start, end        time.Time
	calls, callsEnd   callCounts // of the TenantGateway whose routes change, by outcome
	callsB, callsBEnd float64    // of the other tenant's TenantGateway
	xp, xpEnd         callCounts // Crossplane's counters of every TenantGateway
}

// callPollPeriod is how often sampleCalls reads the function's counters.
const callPollPeriod = 100 * time.Millisecond

// callSampler polls the function's function_tenant_gateway_xr_calls_total
// of the TenantGateways cozystack of some namespaces, by outcome, and
// records when it saw each of their calls counted.
type callSampler struct {
	namespaces []string
	// polling is held through a poll, so that polls read and record in
	// turn.
	polling sync.Mutex
	mu      sync.Mutex
	latest  map[string]callCounts  // by namespace
	runs    map[string][]time.Time // by namespace: one time per call
	err     error
	cancel  func()
	done    chan struct{}
}

// sampleCalls starts polling the calls of the TenantGateways of
// namespaces; it has read them once when it returns.
func sampleCalls(t *testing.T, namespaces ...string) *callSampler {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	s := &callSampler{namespaces: namespaces, latest: map[string]callCounts{}, runs: map[string][]time.Time{}, cancel: cancel, done: make(chan struct{})}
	if err := s.poll(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(callPollPeriod)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if err := s.poll(); err != nil {
				s.mu.Lock()
				s.err = err
				s.mu.Unlock()
				return
			}
		}
	}()
	t.Cleanup(func() { s.cancel(); <-s.done })
	return s
}

// poll reads the counters once and records a time for every call counted
// since the last read.
func (s *callSampler) poll() error {
	s.polling.Lock()
	defer s.polling.Unlock()
	by, err := scrapeSeries(functionMetrics, "function_tenant_gateway_xr_calls_total",
		[]string{`xr_kind="TenantGateway"`, `xr_name="cozystack"`}, "xr_namespace", "outcome")
	if err != nil {
		return err
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ns := range s.namespaces {
		c := callCounts{}
		for k, v := range by {
			if n, outcome, _ := strings.Cut(k, " "); n == ns {
				c[outcome] = v
			}
		}
		prev, seen := s.latest[ns]
		if seen {
			added := c.total() - prev.total()
			if added < 0 {
				return fmt.Errorf("the function's count of %s/cozystack's calls went from %v to %v: it restarted", ns, prev.total(), c.total())
			}
			for range int(added) {
				s.runs[ns] = append(s.runs[ns], now)
			}
		}
		s.latest[ns] = c
	}
	return nil
}

// counts is the last read of ns's calls by outcome.
func (s *callSampler) counts(ns string) callCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.latest[ns])
}

func (s *callSampler) total(ns string) float64 { return s.counts(ns).total() }

// runsOf is when the poll saw each call of ns's TenantGateway counted since
// sampling began.
func (s *callSampler) runsOf(ns string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.runs[ns])
}

// stop ends the polling and is the runs seen by namespace; a poll that
// failed fails the test.
func (s *callSampler) stop(t *testing.T) map[string][]time.Time {
	t.Helper()
	s.cancel()
	<-s.done
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.runs
}

// lastBefore is the last of times before at, zero when there is none.
func lastBefore(times []time.Time, at time.Time) time.Time {
	var last time.Time
	for _, c := range times {
		if c.Before(at) {
			last = c
		}
	}
	return last
}

// afterOrAt is the times not before at.
func afterOrAt(times []time.Time, at time.Time) []time.Time {
	var out []time.Time
	for _, c := range times {
		if !c.Before(at) {
			out = append(out, c)
		}
	}
	return out
}

// compositeController is the name of Crossplane's controller of
// TenantGateways, as its metrics label it.
const compositeController = `controller="composite/tenantgateways.gateway.cozystack.io"`

// scrapeComposite is what Crossplane counts of its TenantGateway
// controller, every TenantGateway of every test together (its metrics are
// per controller, not per XR): reconciles
// (controller_runtime_reconcile_total) and the watch events its circuit
// breakers dropped (circuit_breaker_events_total, result Dropped).
func scrapeComposite(t *testing.T) callCounts {
	t.Helper()
	return callCounts{
		"reconciles":     scrapeSum(t, crossplaneMetrics, "controller_runtime_reconcile_total", compositeController),
		"dropped events": scrapeSum(t, crossplaneMetrics, "circuit_breaker_events_total", compositeController, `result="Dropped"`),
	}
}

// xrActivity is what moves while the TenantGateways of namespaces are
// being reconciled: the function's calls of them (read afresh) and their
// resourceVersions (Crossplane's writes of them). A reconcile of one that
// composes calls the function, so once neither moves, none runs.
func xrActivity(t *testing.T, calls *callSampler, namespaces ...string) func() string {
	return func() string {
		if err := calls.poll(); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, ns := range namespaces {
			parts = append(parts, fmt.Sprintf("%s: %v calls, resourceVersion %s", ns, calls.total(ns), xrVersion(t, ns)))
		}
		return strings.Join(parts, "; ")
	}
}

// xrVersion is the resourceVersion of ns's TenantGateway cozystack.
func xrVersion(t *testing.T, ns string) string {
	t.Helper()
	if xr, ok := get(t, gvkTenantGateway, ns, "cozystack"); ok {
		return xr.GetResourceVersion()
	}
	return "(absent)"
}

// quiet waits until what state reads stays the same for window (half a
// second after a change: the reconciles one change causes follow each
// other within a few hundred milliseconds).
func quiet(t *testing.T, window time.Duration, what string, state func() string) {
	t.Helper()
	deadline := time.Now().Add(settle)
	last, since := state(), time.Now()
	for time.Since(since) < window {
		if time.Now().After(deadline) {
			t.Fatalf("%s still moving after %s: %s", what, settle, last)
		}
		time.Sleep(50 * time.Millisecond)
		if now := state(); now != last {
			last, since = now, time.Now()
		}
	}
}

func countsString(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// routeObservedGeneration is the generation of the route Envoy Gateway's
// status last reported on, 0 when it reported none.
func routeObservedGeneration(rt *unstructured.Unstructured) int64 {
	for _, p := range slice(rt, "status", "parents") {
		for _, c := range anySlice(p, "conditions") {
			if m, _ := c.(map[string]any); m["type"] == "Accepted" {
				g, _ := m["observedGeneration"].(int64)
				return g
			}
		}
	}
	return 0
}

func anySlice(v any, field string) []any {
	m, _ := v.(map[string]any)
	s, _ := m[field].([]any)
	return s
}

// trackedEvents records the watch events of what a TenantGateway composes
// or requires, each named by kind and what changed: added, deleted, spec
// (its generation or metadata), or status.
type trackedEvents struct {
	mu    sync.Mutex
	evs   []trackedEvent
	stops []func()
	wg    sync.WaitGroup
	// openAtStart is whether the TenantGateway's Responsive condition was
	// False when the watch began.
	openAtStart bool
}

type trackedEvent struct {
	at   time.Time
	what string
	// tokens is what the event costs the XR in Crossplane's circuit
	// breaker: controller-runtime maps an update twice (old and new
	// object), anything else once.
	tokens int
	// xr marks an event of the TenantGateway, and open whether its
	// Responsive condition is then False: Crossplane reconciled it with
	// its circuit breaker open.
	xr, open bool
}

func watchTracked(t *testing.T, ns, apps string) *trackedEvents {
	t.Helper()
	wc := watchClient(t)
	te := &trackedEvents{}
	watchOne := func(gvk schema.GroupVersionKind, ns, label string, only ...client.ListOption) {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := k8s.List(t.Context(), l, append([]client.ListOption{client.InNamespace(ns)}, only...)...); err != nil {
			t.Fatal(err)
		}
		prev := map[string]*unstructured.Unstructured{}
		for i := range l.Items {
			prev[l.Items[i].GetName()] = &l.Items[i]
			if gvk == gvkTenantGateway {
				te.openAtStart = breakerOpen(&l.Items[i])
			}
		}
		opts := append([]client.ListOption{client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.GetResourceVersion()}}}, only...)
		w, err := wc.Watch(t.Context(), l, opts...)
		if err != nil {
			t.Fatal(err)
		}
		te.stops = append(te.stops, w.Stop)
		te.wg.Add(1)
		go func() {
			defer te.wg.Done()
			for ev := range w.ResultChan() {
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				what := label + " " + changeOf(ev.Type, prev[u.GetName()], u)
				prev[u.GetName()] = u
				tokens := 1
				if ev.Type == watch.Modified {
					tokens = 2
				}
				te.mu.Lock()
				xr := gvk == gvkTenantGateway
				te.evs = append(te.evs, trackedEvent{at: time.Now(), what: what, tokens: tokens, xr: xr, open: xr && breakerOpen(u)})
				te.mu.Unlock()
			}
		}()
	}
	watchOne(gvkHTTPRoute, apps, "route")
	watchOne(gvkHTTPRoute, ns, "redirect-route")
	watchOne(gvkGateway, ns, "Gateway")
	watchOne(gvkCertificate, ns, "Certificate")
	watchOne(gvkIssuer, ns, "Issuer")
	watchOne(gvkNSObject, ns, "Object")
	watchOne(gvkTenantGateway, ns, "TenantGateway")
	// The cluster-scoped objects every TenantGateway requires: its
	// GatewayClass (Envoy Gateway writes its status) and the platform
	// settings (other tests change them), whose events re-run every
	// TenantGateway that required them.
	watchOne(gvkGatewayClass, "", "GatewayClass", client.MatchingFields{"metadata.name": "envoy"})
	watchOne(gvkEnvironmentConfig, "", "EnvironmentConfig", client.MatchingFields{"metadata.name": "tenant-gateway-platform"})
	t.Cleanup(func() { te.stop() })
	return te
}

// The cluster-scoped kinds a TenantGateway requires by name.
var (
	gvkGatewayClass      = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "GatewayClass"}
	gvkEnvironmentConfig = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1beta1", Kind: "EnvironmentConfig"}
)

// changeOf names what an event changed.
func changeOf(typ watch.EventType, before, after *unstructured.Unstructured) string {
	switch {
	case typ == watch.Added:
		return "added"
	case typ == watch.Deleted:
		return "deleted"
	case before == nil:
		return "modified"
	case before.GetGeneration() != after.GetGeneration() || !equality.Semantic.DeepEqual(before.Object["spec"], after.Object["spec"]):
		return "spec"
	case !reflect.DeepEqual(before.Object["status"], after.Object["status"]):
		return "status" + statusDiff(before, after)
	default:
		var keys []string
		mb, _ := before.Object["metadata"].(map[string]any)
		ma, _ := after.Object["metadata"].(map[string]any)
		for _, k := range unionKeys(mb, ma) {
			if k != "resourceVersion" && !reflect.DeepEqual(mb[k], ma[k]) {
				keys = append(keys, k)
			}
		}
		return "metadata(" + strings.Join(keys, ", ") + ")"
	}
}

// statusDiff names the status fields an update changed, and for
// conditions their types: "(conditions Ready, hostnames)".
func statusDiff(before, after *unstructured.Unstructured) string {
	b, _ := before.Object["status"].(map[string]any)
	a, _ := after.Object["status"].(map[string]any)
	var changed []string
	for _, k := range unionKeys(b, a) {
		if reflect.DeepEqual(b[k], a[k]) {
			continue
		}
		if k != "conditions" {
			changed = append(changed, k)
			continue
		}
		byType := func(v any) map[string]any {
			out := map[string]any{}
			for _, c := range anySlice(map[string]any{"c": v}, "c") {
				if m, ok := c.(map[string]any); ok {
					out[fmt.Sprint(m["type"])] = m
				}
			}
			return out
		}
		cb, ca := byType(b[k]), byType(a[k])
		for _, typ := range unionKeys(cb, ca) {
			if !reflect.DeepEqual(cb[typ], ca[typ]) {
				mb, _ := cb[typ].(map[string]any)
				ma, _ := ca[typ].(map[string]any)
				var fields []string
				for _, f := range unionKeys(mb, ma) {
					if !reflect.DeepEqual(mb[f], ma[f]) {
						fields = append(fields, f)
					}
				}
				changed = append(changed, "condition "+typ+" "+strings.Join(fields, "+"))
			}
		}
	}
	return "(" + strings.Join(changed, ", ") + ")"
}

func unionKeys(a, b map[string]any) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func (te *trackedEvents) stop() *trackedEvents {
	for _, s := range te.stops {
		s()
	}
	te.stops = nil
	te.wg.Wait()
	return te
}

// lastExcept is the time of the last event whose description does not
// start with prefix, zero when there is none.
func (te *trackedEvents) lastExcept(prefix string) time.Time {
	te.mu.Lock()
	defer te.mu.Unlock()
	var last time.Time
	for _, e := range te.evs {
		if !strings.HasPrefix(e.what, prefix) && e.at.After(last) {
			last = e.at
		}
	}
	return last
}

// breakerOpen is whether the TenantGateway's Responsive condition was
// False at some time between two times: at from (its last event before,
// or the watch's start), or in an event until to. Crossplane writes it
// False on a reconcile that finds the XR's circuit breaker open, and True
// again on the first that finds it closed.
func (te *trackedEvents) breakerOpen(from, to time.Time) bool {
	te.mu.Lock()
	defer te.mu.Unlock()
	open := te.openAtStart
	for _, e := range te.evs {
		switch {
		case !e.xr || !e.at.Before(to):
		case e.at.Before(from):
			open = e.open
		case e.open:
			return true
		}
	}
	return open
}

// breakerOpen is whether an XR's Responsive condition is False: Crossplane
// last reconciled it with its circuit breaker open.
func breakerOpen(xr *unstructured.Unstructured) bool {
	s, _, _ := condition(xr, "Responsive")
	return s == "False"
}

// during is the events between two times by what they changed, and the
// circuit breaker tokens they cost.
func (te *trackedEvents) during(from, to time.Time) (string, int) {
	te.mu.Lock()
	defer te.mu.Unlock()
	by := map[string]int{}
	tokens := 0
	for _, e := range te.evs {
		if !e.at.Before(from) && e.at.Before(to) {
			by[e.what]++
			tokens += e.tokens
		}
	}
	return countsString(by), tokens
}

// callCounts is counters by what they count: the function's calls by
// outcome, or Crossplane's counts of its TenantGateway controller.
type callCounts map[string]float64

// scrapeCalls is function_tenant_gateway_calls_total of TenantGateways by
// outcome.

func scrapeCalls(t *testing.T) callCounts {
	t.Helper()
	out := callCounts(scrapeBy(t, functionMetrics, "function_tenant_gateway_calls_total", []string{`xr_kind="TenantGateway"`}, "outcome"))
	if len(out) == 0 {
		t.Fatalf("%s serves no function_tenant_gateway_calls_total of TenantGateways", functionMetrics)
	}
	return out
}

func (c callCounts) total() float64 {
	var n float64
	for _, v := range c {
		n += v
	}
	return n
}

func (c callCounts) minus(o callCounts) string {
	by := map[string]int{}
	for k, v := range c {
		by[k] = int(v - o[k])
	}
	return countsString(by)
}
