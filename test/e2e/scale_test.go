//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// scaleTenant is one Tenant of the platform TestScale builds: its claim's
// name and namespace, the namespace its composition creates, and its apex.
type scaleTenant struct {
	name, claimNS, ns, apex string
}

// scalePlan is n Tenants, each with gateway: true: two of every three are
// children of the root tenant, the third a child of the one before it
// (nested: its claim lives in its parent's namespace, so it is created once
// that namespace exists).
func scalePlan(n int) []scaleTenant {
	out := make([]scaleTenant, 0, n)
	var parent scaleTenant
	for i := range n {
		if i%3 == 2 {
			name := fmt.Sprintf("n%04d", i)
			out = append(out, scaleTenant{name: name, claimNS: parent.ns, ns: parent.ns + "-" + name, apex: name + "." + parent.apex})
			continue
		}
		name := fmt.Sprintf("s%04d", i)
		parent = scaleTenant{name: name, claimNS: "tenant-root", ns: "tenant-" + name, apex: name + ".example.org"}
		out = append(out, parent)
	}
	return out
}

// hostnames are the hostnames of a tenant's routes, one route each.
func (st scaleTenant) hostnames(routes int) []string {
	out := make([]string, routes)
	for j := range routes {
		out[j] = fmt.Sprintf("r%d.%s", j, st.apex)
	}
	return out
}

func (st scaleTenant) claim() string {
	return fmt.Sprintf(`
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: %s, namespace: %s}
spec: {gateway: true}
`, st.name, st.claimNS)
}

// scaleConfig is what make scale passes: the number of Tenants, routes per
// tenant, the settings' name and the periods that decide the measuring
// window.
type scaleConfig struct {
	n, routes int
	settings  string
	out       string
	window    time.Duration
	ttl       time.Duration // the function's --ttl: every XR runs once per ttl
	periods   map[string]string
}

func scaleSettings(t *testing.T) scaleConfig {
	t.Helper()
	v := os.Getenv("SCALE_N")
	if v == "" {
		t.Skip("SCALE_N is not set: TestScale runs under make scale (docs/benchmarks.md)")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 3 || n > 5000 {
		t.Fatalf("SCALE_N=%q: want a number of Tenants from 3 to 5000", v)
	}
	c := scaleConfig{n: n, routes: 2, settings: os.Getenv("SCALE_SETTINGS"), out: os.Getenv("SCALE_OUT"), periods: map[string]string{}}
	if c.settings == "" {
		c.settings = "harness"
	}
	// up.sh's defaults, which make scale's variables override.
	c.window = 2 * time.Minute
	for env, def := range map[string]string{"FUNCTION_TTL": "10s", "PROVIDER_POLL": "15s", "PROVIDER_SYNC": "1m", "CROSSPLANE_POLL": "15s"} {
		p := os.Getenv(env)
		if p == "" {
			p = def
		}
		c.periods[env] = p
		d, err := time.ParseDuration(p)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a positive duration", env, p)
		}
		if env == "FUNCTION_TTL" {
			c.ttl = d
		}
		// The window spans one whole period of what runs on a timer
		// (the sync period aside, which is an hour when it is long), so
		// each XR and Object is counted once whatever its phase.
		if env != "PROVIDER_SYNC" && d > c.window {
			c.window = d
		}
	}
	if w := os.Getenv("SCALE_WINDOW"); w != "" {
		if c.window, err = time.ParseDuration(w); err != nil {
			t.Fatalf("SCALE_WINDOW=%q: want a duration", w)
		}
	}
	return c
}

// TestScale builds a platform of SCALE_N Tenants on the e2e control plane
// and measures what an operator sizing a platform needs: the time to converge from empty (every
// claim Ready, every Gateway with a listener for each of its routes), the
// steady state's API requests by verb and resource (the API server's own
// apiserver_request_total), the CPU and resident memory of Crossplane,
// provider-kubernetes and the function (from /proc), the function's calls
// per second, and a route change's latency at that scale. It records the
// run in docs/scale/ and rewrites docs/benchmarks.md's table and docs/scale.png
// from every run recorded there. It runs only under make scale; nothing is
// deleted at the end, since the control plane is wiped.
func TestScale(t *testing.T) {
	cfg := scaleSettings(t)
	procs := components(t)
	rec := scaleRecord{N: cfg.n, Settings: cfg.settings, Routes: cfg.routes, Periods: cfg.periods,
		Date: time.Now().UTC().Format(time.RFC3339), Window: cfg.window.Seconds()}

	// The platform with its publishing tenant, then the baseline: what the
	// control plane costs with no tenant but the root.
	if err := applyDocs(t.Context(), k8s, platformSettings()); err != nil {
		t.Fatal(err)
	}
	namespace(t, "tenant-root", nil)
	if err := applyDocs(t.Context(), k8s, (scaleTenant{name: "root", claimNS: "tenant-root"}).claim()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Second)
	base := measure(t, procs, time.Minute)
	rec.Baseline = base.summary()
	t.Logf("baseline (root tenant only): %s", base)

	plan := scalePlan(cfg.n)
	start := sampleNow(t, procs)
	// Convergence may take what the test's time limit (SCALE_TIMEOUT)
	// leaves after it: at most quietLimit to settle, the window, the
	// route changes (at most 5 minutes) and two minutes to write the
	// figures.
	limit := 40 * time.Minute
	if d, ok := t.Deadline(); ok {
		limit = time.Until(d) - cfg.window - quietLimit - 7*time.Minute
	}
	rec.ConvergeTenants, rec.ConvergeGateways = converge(t, plan, cfg.routes, limit)
	conv := sampleNow(t, procs).minus(start)
	rec.Convergence = conv.summary()
	t.Logf("%d Tenants converged: every claim Ready after %.0fs, every Gateway with its listeners after %.0fs; meanwhile %s",
		cfg.n, rec.ConvergeTenants, rec.ConvergeGateways, conv)

	// What follows convergence settles, then one window of the steady
	// state.
	rec.Settle = awaitQuiet(t, len(plan)+1, cfg.ttl)
	steady := measure(t, procs, cfg.window)
	rec.Steady = steady.summary()
	t.Logf("steady state over %s: %s", cfg.window, steady)

	rec.RouteP50, rec.RouteMax = routeChanges(t, plan, 6)
	t.Logf("a route change at %d Tenants: created -> listener in its Gateway p50 %.1fs, max %.1fs", cfg.n, rec.RouteP50, rec.RouteMax)

	if cfg.out == "" {
		t.Log("SCALE_OUT is not set: the figures are not written to docs/")
		return
	}
	if err := writeScale(cfg.out, rec); err != nil {
		t.Fatal(err)
	}
}

// converge creates every claim (a nested one once its parent's namespace
// exists) and each tenant's routes (once its namespace exists), and waits
// until every claim is Ready and every tenant's Gateway has a listener for
// each of its routes, for at most timeout. It returns both times from the
// first claim, in seconds.
func converge(t *testing.T, plan []scaleTenant, routes int, timeout time.Duration) (tenantsReady, gatewaysDone float64) {
	t.Helper()
	claimed, routed := make([]bool, len(plan)), make([]bool, len(plan))
	start, lastLog := time.Now(), time.Now()
	for {
		nss := map[string]bool{}
		all, err := tryList(t, gvkNamespace)
		if err != nil {
			if time.Since(start) > timeout {
				t.Fatalf("after %s: %v", timeout, err)
			}
			t.Logf("after %.0fs: %v; again in 5s", time.Since(start).Seconds(), err)
			time.Sleep(5 * time.Second)
			continue
		}
		for _, ns := range all {
			nss[ns.GetName()] = true
		}
		// An API server that the burst of a cold start saturates answers
		// some requests with a timeout: what failed is applied again in
		// the next pass, and only the time limit ends the wait. Claims
		// first, then the routes of tenants whose namespace exists, each
		// scaleWorkers at a time.
		var docs []string
		var idx []int
		for i, st := range plan {
			if !claimed[i] && nss[st.claimNS] {
				docs, idx = append(docs, st.claim()), append(idx, i)
			}
		}
		done, failed, lastErr := applyAll(t, docs)
		for k, i := range idx {
			claimed[i] = done[k]
		}
		docs, idx = nil, nil
		for i, st := range plan {
			if claimed[i] && !routed[i] && nss[st.ns] {
				var rs []string
				for j, h := range st.hostnames(routes) {
					rs = append(rs, httpRoute(st.ns, fmt.Sprintf("r%d", j), st.ns, "cozystack", h))
				}
				docs, idx = append(docs, strings.Join(rs, "\n---\n")), append(idx, i)
			}
		}
		done, rf, rerr := applyAll(t, docs)
		for k, i := range idx {
			routed[i] = done[k]
		}
		if rf > 0 {
			failed, lastErr = failed+rf, rerr
		}
		if failed > 0 {
			t.Logf("after %.0fs: %d applies failed, again in the next pass; the last: %v", time.Since(start).Seconds(), failed, lastErr)
		}
		ready, served, err := progress(t, plan, routes)
		elapsed := time.Since(start).Seconds()
		if err != nil {
			t.Logf("after %.0fs: %v", elapsed, err)
		}
		if ready == len(plan) && tenantsReady == 0 {
			tenantsReady = elapsed
		}
		if served == len(plan) && gatewaysDone == 0 {
			gatewaysDone = elapsed
		}
		if tenantsReady > 0 && gatewaysDone > 0 {
			return tenantsReady, gatewaysDone
		}
		if time.Since(lastLog) > 30*time.Second {
			t.Logf("after %.0fs: %d of %d claims created, %d Ready, %d Gateways with every listener (load %s)", elapsed, count(claimed), len(plan), ready, served, loadavg())
			lastLog = time.Now()
		}
		if time.Since(start) > timeout {
			t.Fatalf("after %s: %d of %d claims created, %d Ready, %d Gateways with every listener", timeout, count(claimed), len(plan), ready, served)
		}
		time.Sleep(5 * time.Second)
	}
}

// quietLimit bounds how long awaitQuiet waits for the platform to quiet down.
const quietLimit = 15 * time.Minute

// awaitQuiet waits, after convergence, until the function is called no more
// than its TTL asks: at most 1.25 times the XRs (two per tenant) per ttl,
// plus half a call a second for what events still cause, over a minute. A
// cold start's tail (XRs re-run while the API server's watch cache and
// Crossplane's informers catch up, each status write waking its claim)
// outlasts the moment every claim is Ready: at 300 Tenants a window that
// opened one minute after it counted twice the calls the TTL makes. A
// Crossplane its own timers saturate (the harness' settings at 100
// Tenants) calls less than the TTL asks, so this tells a tail from a
// steady state only where the periods leave Crossplane idle. It waits at
// least a minute and at most quietLimit, and returns how long it waited,
// in seconds.
func awaitQuiet(t *testing.T, tenants int, ttl time.Duration) float64 {
	t.Helper()
	start := time.Now()
	want := 1.25*float64(2*tenants)/ttl.Seconds() + 0.5
	for {
		before, at := functionCalls(t), time.Now()
		time.Sleep(time.Minute)
		rate := (functionCalls(t) - before) / time.Since(at).Seconds()
		waited := time.Since(start)
		if rate <= want {
			t.Logf("settled after %.0fs: %.2f function calls/s over the last minute (at most %.2f: 1.25 × XRs / TTL + 0.5)", waited.Seconds(), rate, want)
			return waited.Seconds()
		}
		if waited >= quietLimit {
			t.Logf("not settled after %.0fs: %.2f function calls/s over the last minute (more than %.2f); measuring anyway", waited.Seconds(), rate, want)
			return waited.Seconds()
		}
		t.Logf("settling: %.2f function calls/s over the last minute (more than %.2f)", rate, want)
	}
}

// scaleWorkers is how many applies converge makes at once: made one at a
// time, each waiting on an API server a cold start saturates, they would
// set most of the convergence time.
const scaleWorkers = 8

// applyAll applies each of docs, scaleWorkers at a time, and reports which
// were applied, how many failed and the last error.
func applyAll(t *testing.T, docs []string) (done []bool, failed int, lastErr error) {
	done = make([]bool, len(docs))
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, scaleWorkers)
	for i, d := range docs {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			err := applyDocs(t.Context(), k8s, d)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed, lastErr = failed+1, err
				return
			}
			done[i] = true
		}()
	}
	wg.Wait()
	return done, failed, lastErr
}

// progress counts the plan's claims that are Ready and the tenants whose
// Gateway has a listener for each of their routes' hostnames.
func progress(t *testing.T, plan []scaleTenant, routes int) (ready, served int, err error) {
	t.Helper()
	tenants, err := tryList(t, gvkTenant)
	if err != nil {
		return 0, 0, err
	}
	gateways, err := tryList(t, gvkGateway)
	if err != nil {
		return 0, 0, err
	}
	claims := map[string]*unstructured.Unstructured{}
	for _, c := range tenants {
		claims[c.GetNamespace()+"/"+c.GetName()] = &c
	}
	gws := map[string]*unstructured.Unstructured{}
	for _, g := range gateways {
		if g.GetName() == "cozystack" {
			gws[g.GetNamespace()] = &g
		}
	}
	for _, st := range plan {
		if s, _, _ := condition(claims[st.claimNS+"/"+st.name], "Ready"); s == "True" {
			ready++
		}
		gw, all := gws[st.ns], true
		for _, h := range st.hostnames(routes) {
			all = all && gw != nil && listenerFor(gw, h) != ""
		}
		if all {
			served++
		}
	}
	return ready, served, nil
}

// tryList lists every object of a kind, returning the error (an API server
// saturated by a cold start times out) where list fails the test.
func tryList(t *testing.T, gvk schema.GroupVersionKind) ([]unstructured.Unstructured, error) {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := k8s.List(t.Context(), l); err != nil {
		return nil, fmt.Errorf("cannot list %s: %w", gvk.Kind, err)
	}
	return l.Items, nil
}

func count(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// routeChanges adds one route to each of k tenants spread over the plan, 2
// s apart, and returns the p50 and max of creation -> listener in the
// tenant's Gateway, in seconds. That is the function's and Crossplane's
// part; the class here (cilium) has no controller to accept it.
func routeChanges(t *testing.T, plan []scaleTenant, k int) (p50, maxSeconds float64) {
	t.Helper()
	picked := make([]scaleTenant, 0, k)
	for i := range k {
		picked = append(picked, plan[i*len(plan)/k])
	}
	created := map[int]time.Time{}
	latency := map[int]time.Duration{}
	deadline, next := time.Now().Add(5*time.Minute), time.Now()
	for len(latency) < len(picked) {
		if n := len(created); n < len(picked) && !time.Now().Before(next) {
			st := picked[n]
			if err := applyDocs(t.Context(), k8s, httpRoute(st.ns, "late", st.ns, "cozystack", "late."+st.apex)); err != nil {
				t.Fatal(err)
			}
			created[n], next = time.Now(), next.Add(2*time.Second)
		}
		for i, at := range created {
			if _, done := latency[i]; done {
				continue
			}
			if gw, _ := get(t, gvkGateway, picked[i].ns, "cozystack"); listenerFor(gw, "late."+picked[i].apex) != "" {
				latency[i] = time.Since(at)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5m, %d of %d new routes have a listener: %v", len(latency), len(picked), latency)
		}
		time.Sleep(250 * time.Millisecond)
	}
	ds := make([]float64, 0, len(latency))
	for _, d := range latency {
		ds = append(ds, d.Seconds())
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[len(ds)-1]
}

// loadavg is the machine's load average (1, 5 and 15 minutes): the figures
// are taken on a machine others load too.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
