//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
)

// TestFaults: the components around the function fail while
// three TenantGateways serve and their routes change, and nothing served is
// ever lost. The tenants: tenant-fp, http01 on Envoy Gateway's class with an
// attached namespace (the parent: apex fp.example); tenant-fk, dns01 with a
// child zone (nested: its apex kid.fp.example is under the parent's); and
// tenant-fe, edge with a child zone. A sampler watches their Gateways,
// Certificates, Secrets and namespaces all along and records every moment a
// listener of a served hostname, a Certificate, a Secret or a namespace mark
// the steady state keeps is missing; a churner adds and removes routes in
// all three all the while. Each fault is injected E2E_FAULT_ROUNDS times (3
// by default); after each, the test waits for convergence (each Gateway's
// listeners are exactly those of the routes, each XR Synced with its status
// of the current generation, Envoy Gateway's status of the current
// Gateway) and records how long it took. Last, the TenantGateway API's
// Configuration is upgraded to a release whose Composition composes
// differently and rolled back, three times. The test runs alone (not
// parallel, after the other tests of make e2e): it restarts what every
// other test relies on.
func TestFaults(t *testing.T) {
	if os.Getenv("E2E_FAULTS") != "1" {
		t.Skip("E2E_FAULTS is not 1: `make faults` runs this test on a control plane of its own")
	}
	w := newFaultWorld(t)
	w.baseline(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w.sample(ctx, t)
	w.wg.Add(1)
	go w.churn(ctx)
	rounds := 3
	if s := os.Getenv("E2E_FAULT_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("E2E_FAULT_ROUNDS %q: want a positive number", s)
		}
		rounds = n
	}
	// Far shorter than Crossplane's two-minute reconcile timeout: a call to
	// the function waits for it (gRPC waitForReady) until then, so every
	// outage below two minutes is the same state to Crossplane (its calls
	// wait, composed resources stay as they are). 15 s is long enough for
	// the churner to add and remove routes of every tenant meanwhile (the
	// test requires 3 changes), and three rounds of it cost under a minute
	// of CI. A longer outage adds a longer reconnect back-off after it (a
	// slower convergence) and, past two minutes (E2E_FAULT_OUTAGE=150s),
	// the XRs' Synced turning False when their calls time out
	// (docs/operations.md, Faults).
	outage := 15 * time.Second
	if s := os.Getenv("E2E_FAULT_OUTAGE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("E2E_FAULT_OUTAGE %q: %v", s, err)
		}
		outage = d
	}
	start := time.Now()
	w.wg.Add(1)
	go w.sampleLoad(ctx)
	for _, f := range []struct {
		name   string
		rounds int
		inject func(t *testing.T, round int) time.Time
		// undo, when set, is injected after each round's convergence and
		// measured as a fault of its own (a rollback after an upgrade).
		undoName string
		undo     func(t *testing.T, round int) time.Time
		// before, when set, runs once before the first round.
		before func(t *testing.T)
	}{
		{"function killed mid-call", rounds, w.killFunctionMidCall, "", nil, nil},
		{fmt.Sprintf("function down %s", outage), rounds, func(t *testing.T, _ int) time.Time { return w.functionOutage(t, outage) }, "", nil, nil},
		{"Crossplane restarted", rounds, w.restart("crossplane", syscall.SIGTERM, func(t *testing.T) { waitHTTP(t, "http://127.0.0.1:18081/readyz", time.Minute) }), "", nil, nil},
		{"provider-kubernetes restarted", rounds, w.restart("provider-kubernetes", syscall.SIGTERM, func(t *testing.T) { waitHTTP(t, "http://127.0.0.1:18082/readyz", time.Minute) }), "", nil, nil},
		{"kube-apiserver restarted", rounds, w.restart("kube-apiserver", syscall.SIGTERM, func(t *testing.T) {
			// Generous: on a loaded machine a restarted API server
			// answers late and serves the kinds of CRDs later still,
			// since every controller re-lists at once.
			waitAPIServer(t, 3*time.Minute)
			w.waitServes(t)
			// Envoy Gateway's controller, which loses its leader
			// election while the API server is away, is restarted by
			// its liveness probe, which converge plays.
		}), "", nil, nil},
		{"XR status emptied", rounds, w.emptyStatus, "", nil, nil},
		{"Gateway deleted", rounds, w.deleteGateway, "", nil, nil},
		{"Envoy Gateway down while routes change", rounds, w.envoyGatewayDown, "", nil, nil},
		{"Configuration upgraded (its Composition composes differently)", rounds, w.upgrade, "Configuration rolled back", w.rollback, w.plan},
	} {
		if f.before != nil {
			f.before(t)
		}
		var took, undone []time.Duration
		var wall, undoWall time.Duration
		for r := range f.rounds {
			t1 := time.Now()
			took = append(took, w.inject(t, f.name, r, f.inject))
			wall += time.Since(t1)
			if f.undo != nil {
				t1 = time.Now()
				undone = append(undone, w.inject(t, f.undoName, r, f.undo))
				undoWall += time.Since(t1)
			}
		}
		w.report(t, f.name, took, wall)
		if f.undo != nil {
			w.report(t, f.undoName, undone, undoWall)
		}
	}
	cancel()
	w.wg.Wait()
	t.Logf("faults done in %s (load average over 1 min, sampled every 10 s: %s); %d samples, %d route changes; convergence per fault (from the fault, or for an outage from the component's return), and the wall time of its rounds (churn before each, the fault, convergence):\n"+
		"| fault | rounds | p50 | max | all | wall |\n%s",
		time.Since(start).Round(time.Second), w.loadRange(), w.samples, w.changes, strings.Join(w.table, "\n"))
}

// faultTenant is one TenantGateway of the test and what the churner changes
// in it.
type faultTenant struct {
	ns, mode string
	// churnNS is the namespace the churner's routes go to; churnHost makes
	// the hostname of its n-th route.
	churnNS   string
	churnHost func(n int) string
	// churnListens: each churned hostname gets a listener of its own
	// (http01); else the routes fall under a listener the steady state has.
	churnListens bool
}

// churnRoute is a route the churner created: alive until it asks for its
// deletion; seen once a sample showed its listener.
type churnRoute struct {
	tenant      *faultTenant
	name, host  string
	alive, seen bool
	// deleted: the API server took its deletion (one it refused, while it
	// restarts, is tried again).
	deleted bool
}

type faultWorld struct {
	tenants []*faultTenant
	wc      client.WithWatch

	mu sync.Mutex
	// The steady state: what must be there at every sample.
	listeners map[string][]string          // tenant namespace -> "name=hostname"
	objects   map[string]bool              // "Kind ns/name" of Certificates and Secrets
	dnsNames  map[string][]string          // "ns/name" of a Certificate -> names it must keep
	marks     map[string]map[string]string // namespace -> label or annotation -> value
	// suspended: the tenant namespace whose Gateway the test deleted, and
	// the uid of the deleted one; a sample of it or of its absence counts
	// only once a new Gateway is there.
	suspended map[string]types.UID
	routes    []*churnRoute
	next      int
	paused    bool
	// violations are what samples found missing, in order.
	violations []string
	// loads are the 1-minute load averages sampled during the faults.
	loads   []float64
	samples int
	changes int
	table   []string
	wg      sync.WaitGroup
	// egProbe is Envoy Gateway's controller's liveness probe.
	egProbe *probe
	// What the installed Composition makes, which convergence checks: the
	// namespace every port-80 listener admits besides its owner's, whether
	// the newest CompositionRevision of tenantgateway passes the function
	// an input, and the package the Configuration must run ("": the one
	// installed). The upgrade fault changes them.
	certManagerNS string
	withInput     bool
	configRef     string
	upgradeRef    string
	installedRef  string
}

const (
	faultApex  = "fp.example"
	nestedApex = "kid.fp.example"
	edgeApex   = "edge-fp.example"
	// faultConverge bounds convergence after a fault (the figures the test
	// logs are far below it: see docs/operations.md, Faults).
	faultConverge = 3 * time.Minute
)

func newFaultWorld(t *testing.T) *faultWorld {
	t.Helper()
	return &faultWorld{
		tenants: []*faultTenant{
			{ns: "tenant-fp", mode: "http01", churnNS: "fp-apps", churnListens: true, churnHost: func(n int) string { return fmt.Sprintf("c%d.%s", n, faultApex) }},
			{ns: "tenant-fk", mode: "dns01", churnNS: "tenant-fk-alice", churnHost: func(n int) string { return fmt.Sprintf("c%d.alice.%s", n, nestedApex) }},
			{ns: "tenant-fe", mode: "edge", churnNS: "tenant-fe-alice", churnHost: func(n int) string { return fmt.Sprintf("c%d.alice.%s", n, edgeApex) }},
		},
		wc:        watchClient(t),
		listeners: map[string][]string{},
		objects:   map[string]bool{},
		dnsNames:  map[string][]string{},
		marks:     map[string]map[string]string{},
		suspended: map[string]types.UID{},
		egProbe:   newProbe("envoy-gateway", "http://127.0.0.1:8081/healthz"),
		// The platform settings' (examples/cluster/platform.yaml), which
		// win over the function's input.
		certManagerNS: "cozy-cert-manager",
	}
}

// inject injects a fault once, between a few route changes before it and
// convergence after it, fails the test on any sample that lost something
// served meanwhile, and returns how long convergence took.
func (w *faultWorld) inject(t *testing.T, name string, round int, fault func(t *testing.T, round int) time.Time) time.Duration {
	t.Helper()
	w.settleChurn(t)
	v := w.violationCount()
	t0 := fault(t, round)
	w.restartExited(t, name)
	d := w.converge(t, name, t0)
	if got := w.violationsSince(v); len(got) > 0 {
		t.Errorf("%s (round %d): %d samples lost something served:\n%s", name, round+1, len(got), strings.Join(got, "\n"))
	}
	return d
}

// baseline creates the three TenantGateways and their steady routes, waits
// until they serve, plays cert-manager for their Certificates, and records
// the steady state.
func (w *faultWorld) baseline(t *testing.T) {
	t.Helper()
	// The owners' namespaces carry only their host label, and fp-apps
	// nothing: the function's namespace patches label them, and the sampler
	// watches those marks.
	namespace(t, "tenant-fp", map[string]string{"namespace.cozystack.io/host": faultApex})
	namespace(t, "fp-apps", nil)
	namespace(t, "tenant-fk", map[string]string{"namespace.cozystack.io/host": nestedApex})
	namespace(t, "tenant-fk-alice", map[string]string{"namespace.cozystack.io/host": "alice." + nestedApex, labelGateway: "tenant-fk"})
	namespace(t, "tenant-fe", map[string]string{"namespace.cozystack.io/host": edgeApex})
	namespace(t, "tenant-fe-alice", map[string]string{"namespace.cozystack.io/host": "alice." + edgeApex, labelGateway: "tenant-fe"})
	apply(t, fmt.Sprintf(`
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata: {name: cozystack, namespace: tenant-fp}
spec:
  apex: %s
  gatewayClassName: envoy
  attachedNamespaces: [fp-apps]
---
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata: {name: cozystack, namespace: tenant-fk}
spec:
  apex: %s
  certMode: dns01
  dns01:
    provider: cloudflare
    cloudflare:
      apiTokenSecretRef: {name: cloudflare-api-token, key: api-token}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: fault-edge}
spec: {controllerName: example.com/fault-edge}
---
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata: {name: cozystack, namespace: tenant-fe}
spec:
  apex: %s
  certMode: edge
  gatewayClassName: fault-edge
`, faultApex, nestedApex, edgeApex))
	apply(t, httpRoute("fp-apps", "s1", "tenant-fp", "cozystack", "s1."+faultApex))
	apply(t, httpRoute("fp-apps", "s2", "tenant-fp", "cozystack", "s2."+faultApex))
	apply(t, httpRoute("tenant-fk-alice", "www", "tenant-fk", "cozystack", "www.alice."+nestedApex))
	apply(t, httpRoute("tenant-fe-alice", "www", "tenant-fe", "cozystack", "www.alice."+edgeApex))
	want := map[string][]string{
		"tenant-fp": {"s1." + faultApex, "s2." + faultApex},
		"tenant-fk": {nestedApex, "*." + nestedApex, "*.alice." + nestedApex},
		"tenant-fe": {edgeApex, "*." + edgeApex, "*.alice." + edgeApex},
	}
	for _, tn := range w.tenants {
		waitGateway(t, tn.ns, "cozystack", fmt.Sprintf("Gateway %s/cozystack with listeners for %v", tn.ns, want[tn.ns]), func(_ []string, gw *unstructured.Unstructured) bool {
			for _, h := range want[tn.ns] {
				if listenerFor(gw, h) == "" {
					return false
				}
			}
			return true
		})
	}
	eventually(t, oneTTL+settle, "the owners' namespaces and fp-apps labelled by the function", func() (bool, string) {
		for ns, owner := range map[string]string{"tenant-fp": "tenant-fp", "fp-apps": "tenant-fp", "tenant-fk": "tenant-fk", "tenant-fe": "tenant-fe"} {
			if l, a, all := marks(t, ns); l != owner || a != owner {
				return false, fmt.Sprintf("%s: labels %v, annotation %q", ns, all, a)
			}
		}
		return true, ""
	})
	// cert-manager's part: the Secret of every Certificate.
	for _, ns := range []string{"tenant-fp", "tenant-fk"} {
		eventually(t, settle, "Certificates in "+ns, func() (bool, string) {
			n := len(list(t, gvkCertificate, ns))
			return n > 0 && (ns != "tenant-fp" || n == 2), fmt.Sprintf("%d Certificates", n)
		})
		for _, c := range list(t, gvkCertificate, ns) {
			names := []string{}
			for _, n := range slice(&c, "spec", "dnsNames") {
				names = append(names, fmt.Sprint(n))
			}
			tlsSecret(t, ns, str(&c, "spec", "secretName"), names...)
			w.objects["Certificate "+ns+"/"+c.GetName()] = true
			w.objects["Secret "+ns+"/"+str(&c, "spec", "secretName")] = true
			w.dnsNames[ns+"/"+c.GetName()] = names
		}
	}
	w.converge(t, "baseline", time.Now())
	for _, tn := range w.tenants {
		gw, _ := get(t, gvkGateway, tn.ns, "cozystack")
		w.listeners[tn.ns] = listeners(gw)
	}
	for _, ns := range []string{"tenant-fp", "fp-apps", "tenant-fk", "tenant-fk-alice", "tenant-fe", "tenant-fe-alice"} {
		u, _ := get(t, gvkNamespace, "", ns)
		m := map[string]string{}
		for k, v := range u.GetLabels() {
			if strings.HasPrefix(k, "namespace.cozystack.io/") {
				m["label "+k] = v
			}
		}
		if a, ok := u.GetAnnotations()[annotAttachedBy]; ok {
			m["annotation "+annotAttachedBy] = a
		}
		w.marks[ns] = m
	}
	t.Logf("steady state: listeners %v; objects %v; marks %v", w.listeners, w.objects, w.marks)
}

// tenantOf is the test's tenant of a namespace, nil for others.
func (w *faultWorld) tenantOf(ns string) *faultTenant {
	for _, tn := range w.tenants {
		if tn.ns == ns {
			return tn
		}
	}
	return nil
}

// sample starts the sampler: a watch (re-listed whenever it ends, as when
// the API server restarts) of each kind the steady state keeps.
func (w *faultWorld) sample(ctx context.Context, t *testing.T) {
	for _, gvk := range []schema.GroupVersionKind{gvkGateway, gvkCertificate, {Version: "v1", Kind: "Secret"}, gvkNamespace} {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.watchKind(ctx, t, gvk)
		}()
	}
}

func (w *faultWorld) watchKind(ctx context.Context, t *testing.T, gvk schema.GroupVersionKind) {
	present := map[string]bool{}
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	for ctx.Err() == nil {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(listGVK)
		if err := w.wc.List(ctx, l); err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		seen := map[string]bool{}
		for i := range l.Items {
			u := &l.Items[i]
			seen[objKey(u)] = true
			w.check(gvk.Kind, objKey(u), u)
		}
		// Deleted while the watch was down.
		for k := range present {
			if !seen[k] {
				w.check(gvk.Kind, k, nil)
			}
		}
		present = seen
		l2 := &unstructured.UnstructuredList{}
		l2.SetGroupVersionKind(listGVK)
		wi, err := w.wc.Watch(ctx, l2, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.GetResourceVersion()}})
		if err != nil {
			continue
		}
		for ev := range wi.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Error {
				break
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				present[objKey(u)] = true
				w.check(gvk.Kind, objKey(u), u)
			case watch.Deleted:
				delete(present, objKey(u))
				w.check(gvk.Kind, objKey(u), nil)
			}
		}
		wi.Stop()
	}
	_ = t
}

func objKey(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}

// check judges one sample: an object as a watch or list gave it, nil when it
// is gone.
func (w *faultWorld) check(kind, key string, u *unstructured.Unstructured) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples++
	at := time.Now().Format("15:04:05.000")
	lost := func(format string, args ...any) {
		w.violations = append(w.violations, at+" "+fmt.Sprintf(format, args...))
	}
	switch kind {
	case "Gateway":
		ns, name, _ := strings.Cut(key, "/")
		tn := w.tenantOf(ns)
		if tn == nil || name != "cozystack" || len(w.listeners[ns]) == 0 {
			return
		}
		if uid, ok := w.suspended[ns]; ok {
			if u == nil || u.GetUID() == uid {
				return
			}
			delete(w.suspended, ns)
		}
		if u == nil {
			lost("Gateway %s deleted", key)
			return
		}
		have := listeners(u)
		for _, l := range w.listeners[ns] {
			if !slices.Contains(have, l) {
				lost("Gateway %s (generation %d) lacks the steady listener %s: has %v", key, u.GetGeneration(), l, have)
			}
		}
		for _, r := range w.routes {
			if r.tenant != tn || !r.alive || !tn.churnListens {
				continue
			}
			switch l := listenerFor(u, r.host); {
			case l != "":
				r.seen = true
			case r.seen:
				lost("Gateway %s (generation %d) lacks the listener of %s, served before and still routed: has %v", key, u.GetGeneration(), r.host, have)
			}
		}
	case "Certificate", "Secret":
		if !w.objects[kind+" "+key] {
			return
		}
		if u == nil {
			lost("%s %s deleted", kind, key)
			return
		}
		if kind == "Certificate" {
			have := slice(u, "spec", "dnsNames")
			for _, n := range w.dnsNames[key] {
				if !slices.Contains(have, any(n)) {
					lost("Certificate %s lacks %s: has %v", key, n, have)
				}
			}
		}
	case "Namespace":
		want, ok := w.marks[key]
		if !ok {
			return
		}
		if u == nil {
			lost("namespace %s deleted", key)
			return
		}
		for k, v := range want {
			typ, name, _ := strings.Cut(k, " ")
			got := u.GetLabels()[name]
			if typ == "annotation" {
				got = u.GetAnnotations()[name]
			}
			if got != v {
				lost("namespace %s: %s is %q, was %q", key, k, got, v)
			}
		}
	}
}

func (w *faultWorld) violationCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.violations)
}

func (w *faultWorld) violationsSince(n int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.violations[n:])
}

// churn adds and removes routes in every tenant, one change every 1.5 s
// (at most two churned routes alive per tenant), unless paused. A change
// the API server refuses (while it restarts) is tried again next time.
func (w *faultWorld) churn(ctx context.Context) {
	defer w.wg.Done()
	tick := time.NewTicker(1500 * time.Millisecond)
	defer tick.Stop()
	i := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.mu.Lock()
		if w.paused {
			w.mu.Unlock()
			continue
		}
		tn := w.tenants[i%len(w.tenants)]
		i++
		var alive []*churnRoute
		for _, r := range w.routes {
			if r.tenant == tn && r.alive {
				alive = append(alive, r)
			}
		}
		var gone *churnRoute
		if len(alive) >= 2 {
			gone = alive[0]
			gone.alive = false // before the deletion: from now on it may go
		}
		w.next++
		n := w.next
		w.mu.Unlock()
		if gone != nil {
			w.deleteRoute(ctx, gone)
			continue
		}
		r := &churnRoute{tenant: tn, name: fmt.Sprintf("churn-%d", n), host: tn.churnHost(n)}
		if err := applyDocs(ctx, k8s, httpRoute(tn.churnNS, r.name, tn.ns, "cozystack", r.host)); err != nil {
			continue
		}
		r.alive = true
		w.mu.Lock()
		w.routes = append(w.routes, r)
		w.mu.Unlock()
		w.count()
	}
}

// deleteRoute deletes a churned route, and records it deleted once the API
// server took it.
func (w *faultWorld) deleteRoute(ctx context.Context, r *churnRoute) bool {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvkHTTPRoute)
	u.SetNamespace(r.tenant.churnNS)
	u.SetName(r.name)
	if err := k8s.Delete(ctx, u); client.IgnoreNotFound(err) != nil {
		return false
	}
	w.mu.Lock()
	r.deleted = true
	w.mu.Unlock()
	w.count()
	return true
}

// finishDeletes deletes again every churned route whose deletion the API
// server refused, so that the routes are what the churner meant.
func (w *faultWorld) finishDeletes(t *testing.T) {
	t.Helper()
	eventually(t, time.Minute, "every churned route meant gone deleted", func() (bool, string) {
		w.mu.Lock()
		var left []*churnRoute
		for _, r := range w.routes {
			if !r.alive && !r.deleted {
				left = append(left, r)
			}
		}
		w.mu.Unlock()
		for _, r := range left {
			if !w.deleteRoute(t.Context(), r) {
				return false, "cannot delete " + r.tenant.churnNS + "/" + r.name
			}
		}
		return true, ""
	})
}

func (w *faultWorld) count() {
	w.mu.Lock()
	w.changes++
	w.mu.Unlock()
}

// settleChurn lets the churner make a few changes before a fault.
func (w *faultWorld) settleChurn(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	from := w.changes
	w.mu.Unlock()
	eventually(t, time.Minute, "the churner changing routes", func() (bool, string) {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.changes >= from+3, fmt.Sprintf("%d changes", w.changes-from)
	})
}

// converge pauses the churner and waits until everything agrees with the
// routes as they are: each Gateway has exactly the steady listeners and one
// per live churned http01 hostname; each XR is Synced, its status of its
// generation and its status.listeners those of the Gateway; Envoy Gateway's
// status is of the Gateway's generation. It returns the time from t0.
func (w *faultWorld) converge(t *testing.T, fault string, t0 time.Time) time.Duration {
	t.Helper()
	defer w.pause()()
	w.waitConverged(t, fault)
	return time.Since(t0)
}

// pause pauses the churner and returns what resumes it.
func (w *faultWorld) pause() func() {
	w.mu.Lock()
	w.paused = true
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		w.paused = false
		w.mu.Unlock()
	}
}

// waitConverged waits, the churner paused, until everything agrees with
// the routes as they are (see converge).
func (w *faultWorld) waitConverged(t *testing.T, fault string) {
	t.Helper()
	w.finishDeletes(t)
	// Polled every 250 ms: the time to convergence is the figure.
	eventuallyEvery(t, faultConverge, 250*time.Millisecond, fault+": converged", func() (bool, string) {
		w.egProbe.run(t)
		if ok, saw := w.compositionAgreed(t); !ok {
			return false, saw
		}
		for _, tn := range w.tenants {
			if ok, saw := w.converged(t, tn); !ok {
				return false, saw
			}
		}
		return true, ""
	})
}

func (w *faultWorld) converged(t *testing.T, tn *faultTenant) (bool, string) {
	gw, found := get(t, gvkGateway, tn.ns, "cozystack")
	if !found {
		return false, "no Gateway in " + tn.ns
	}
	have := listeners(gw)
	w.mu.Lock()
	want := slices.Clone(w.listeners[tn.ns])
	var hosts []string
	for _, r := range w.routes {
		if r.tenant == tn && r.alive && tn.churnListens {
			hosts = append(hosts, r.host)
		}
	}
	w.mu.Unlock()
	for _, l := range want {
		if !slices.Contains(have, l) {
			return false, fmt.Sprintf("Gateway %s lacks %s: %v", tn.ns, l, have)
		}
	}
	for _, h := range hosts {
		if listenerFor(gw, h) == "" {
			return false, fmt.Sprintf("Gateway %s has no listener for %s: %v", tn.ns, h, have)
		}
	}
	if len(want) > 0 && len(have) != len(want)+len(hosts) {
		return false, fmt.Sprintf("Gateway %s: %d listeners, want %d (steady %v, churned %v): %v", tn.ns, len(have), len(want)+len(hosts), want, hosts, have)
	}
	w.mu.Lock()
	certManager := w.certManagerNS
	w.mu.Unlock()
	if slices.Contains(want, "http=") {
		if got := httpAdmits(gw); !slices.Contains(got, certManager) {
			return false, fmt.Sprintf("Gateway %s: its http listener admits routes from %v, not from %s", tn.ns, got, certManager)
		}
	}
	xr := tgw(t, tn.ns, "cozystack")
	if xr == nil {
		return false, "no TenantGateway " + tn.ns + "/cozystack"
	}
	if rev := w.newestRevision(t); str(xr, "spec", "crossplane", "compositionRevisionRef", "name") != rev.GetName() {
		return false, fmt.Sprintf("TenantGateway %s on CompositionRevision %q, the newest is %s", tn.ns, str(xr, "spec", "crossplane", "compositionRevisionRef", "name"), rev.GetName())
	}
	if s, r, m := condition(xr, "Synced"); s != "True" {
		return false, fmt.Sprintf("TenantGateway %s Synced %s %s: %s", tn.ns, s, r, m)
	}
	if g, _, _ := unstructured.NestedInt64(xr.Object, "status", "observedGeneration"); g != xr.GetGeneration() {
		return false, fmt.Sprintf("TenantGateway %s: status.observedGeneration %d, generation %d", tn.ns, g, xr.GetGeneration())
	}
	var reported []string
	for _, l := range slice(xr, "status", "listeners") {
		m, _ := l.(map[string]any)
		h, _ := m["hostname"].(string) // none for the http listener
		reported = append(reported, fmt.Sprintf("%v=%s", m["name"], h))
	}
	sort.Strings(reported)
	sorted := slices.Clone(have)
	sort.Strings(sorted)
	if fmt.Sprint(reported) != fmt.Sprint(sorted) {
		return false, fmt.Sprintf("TenantGateway %s status.listeners %v, Gateway %v", tn.ns, reported, sorted)
	}
	if tn.ns == "tenant-fp" {
		for _, c := range slice(gw, "status", "conditions") {
			m, _ := c.(map[string]any)
			if m["type"] == "Accepted" && fmt.Sprint(m["observedGeneration"]) != fmt.Sprint(gw.GetGeneration()) {
				return false, fmt.Sprintf("Gateway %s generation %d, Envoy Gateway's status of %v", tn.ns, gw.GetGeneration(), m["observedGeneration"])
			}
		}
	}
	return true, ""
}

// report records and logs a fault's convergence times and the wall time
// of its rounds.
func (w *faultWorld) report(t *testing.T, fault string, took []time.Duration, wall time.Duration) {
	t.Helper()
	ds := slices.Clone(took)
	for i := range ds {
		ds[i] = ds[i].Round(100 * time.Millisecond)
	}
	slices.Sort(ds)
	row := fmt.Sprintf("| %s | %d | %s | %s | %v | %s |", fault, len(ds), ds[len(ds)/2], ds[len(ds)-1], ds, wall.Round(time.Second))
	t.Logf("fault done: %s (load average %s)", row, w.loadRange())
	w.table = append(w.table, row)
}

// sampleLoad records the machine's 1-minute load average every 10 s, which
// the figures are read with.
func (w *faultWorld) sampleLoad(ctx context.Context) {
	defer w.wg.Done()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile("/proc/loadavg"); err == nil {
			if f := strings.Fields(string(b)); len(f) > 0 {
				if l, err := strconv.ParseFloat(f[0], 64); err == nil {
					w.mu.Lock()
					w.loads = append(w.loads, l)
					w.mu.Unlock()
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// loadRange is "min–max (median m)" of the load averages sampled so far.
func (w *faultWorld) loadRange() string {
	w.mu.Lock()
	ls := slices.Clone(w.loads)
	w.mu.Unlock()
	if len(ls) == 0 {
		return "not sampled"
	}
	slices.Sort(ls)
	return fmt.Sprintf("%.1f–%.1f (median %.1f)", ls[0], ls[len(ls)-1], ls[len(ls)/2])
}

// xrConditions is "Type=Status/Reason: message" of each condition of each
// TenantGateway of the test, for the log.
func (w *faultWorld) xrConditions(t *testing.T) string {
	var out []string
	for _, tn := range w.tenants {
		xr := tgw(t, tn.ns, "cozystack")
		for _, typ := range []string{"Synced", "Ready", "GatewayReady"} {
			s, r, m := condition(xr, typ)
			if len(m) > 200 {
				m = m[:200] + "…"
			}
			out = append(out, fmt.Sprintf("%s %s=%s/%s: %s", tn.ns, typ, s, r, m))
		}
	}
	return strings.Join(out, "\n")
}

// restartExited starts again, as a kubelet restarts a container, any
// process of the control plane that exited during a fault (a controller
// that loses its leader election while the API server is away exits), and
// says so.
func (w *faultWorld) restartExited(t *testing.T, fault string) {
	t.Helper()
	for _, name := range []string{"kube-controller-manager", "crossplane", "provider-kubernetes", "function", "envoy-gateway"} {
		if syscall.Kill(procPID(t, name), 0) == nil {
			continue
		}
		t.Logf("%s: %s exited (see its log); started again, as a kubelet would", fault, name)
		startProc(t, name)
	}
}

// waitServes waits until the API server serves every kind the test reads:
// a restarted one answers for its built-in kinds first and for those of
// CRDs (NotFound until then) once its CRD informer has synced.
func (w *faultWorld) waitServes(t *testing.T) {
	t.Helper()
	eventually(t, 3*time.Minute, "kube-apiserver serving the kinds of CRDs", func() (bool, string) {
		for _, gvk := range []schema.GroupVersionKind{gvkTenantGateway, gvkGateway, gvkHTTPRoute, gvkCertificate, gvkCompositionRevision, gvkConfiguration, gvkConfigurationRev} {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := k8s.List(t.Context(), l, client.Limit(1)); err != nil {
				return false, fmt.Sprintf("%s: %v", gvk.Kind, err)
			}
		}
		return true, ""
	})
}

// probe plays a kubelet's liveness probe on a controller that can hang
// without exiting: Envoy Gateway's loses its leader election while the API
// server is away (longer than its 10 s renew deadline), stops its
// controllers and its health server, and does not exit (seen in TestFaults'
// first run). A kubelet restarts such a container once its probe has failed
// failureThreshold times in a row (3 by default); converge runs this one at
// each of its polls, at most once a second where Envoy Gateway's chart
// probes every 20 s (the same restart, up to 57 s sooner). A process just
// started gets a minute to answer first, as a startup probe would give it.
type probe struct {
	name, url string
	started   time.Time
	last      time.Time
	up        bool // answered since it started
	failures  int
}

func newProbe(name, url string) *probe {
	return &probe{name: name, url: url, started: time.Now()}
}

// restarted records that the process was started again (by a fault).
func (p *probe) restarted() {
	p.started, p.up, p.failures = time.Now(), false, 0
}

// run probes once, unless it probed less than a second ago, and restarts
// the process at the third failure in a row.
func (p *probe) run(t *testing.T) {
	t.Helper()
	const failureThreshold = 3
	if time.Since(p.last) < time.Second {
		return
	}
	p.last = time.Now()
	// The chart's timeoutSeconds.
	c := &http.Client{Timeout: time.Second}
	if rsp, err := c.Get(p.url); err == nil { //nolint:noctx // a loopback probe, bounded by the client's timeout
		_ = rsp.Body.Close()
		if rsp.StatusCode == http.StatusOK {
			p.up, p.failures = true, 0
			return
		}
	}
	if !p.up && time.Since(p.started) < time.Minute {
		return
	}
	p.failures++
	if p.failures < failureThreshold {
		return
	}
	t.Logf("%s: liveness probe %s failed %d times in a row; restarted, as a kubelet would", p.name, p.url, failureThreshold)
	stopProc(t, p.name, syscall.SIGKILL)
	startProc(t, p.name)
	p.restarted()
}

// --- the faults: each returns the time convergence is measured from ---

// killFunctionMidCall kills the function (SIGKILL) while Crossplane has a
// call of it under way, and starts it again at once. Under way: Crossplane's
// function_run_function_request_total of the function is ahead of its
// function_run_function_response_total (it counts a request as it sends it
// and a response as the call returns or fails), so a reconcile waits on the
// function inside its pipeline. The call may return in the moment between
// that read and the signal; the churn keeps calls coming, so the kill lands
// among calls, and Crossplane must fail those cut off, retry them on the
// restarted function and converge.
func (w *faultWorld) killFunctionMidCall(t *testing.T, _ int) time.Time {
	deadline := time.Now().Add(time.Minute)
	for functionCallsInFlight(t) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("Crossplane had no call of the function under way in a minute of route changes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t0 := time.Now()
	stopProc(t, "function", syscall.SIGKILL)
	startProc(t, "function")
	waitTCP(t, functionGRPC, time.Minute)
	return t0
}

// functionCallsInFlight is the RunFunction calls of the function Crossplane
// had sent less those it had had return, by its own counters. The requests
// are read first and the responses after, so it is at most the calls under
// way at the first read: when it is positive, one was.
func functionCallsInFlight(t *testing.T) float64 {
	t.Helper()
	fn := `function_name="cozystack-function-tenant-gateway"`
	sent := scrapeSum(t, crossplaneMetrics, "function_run_function_request_total", fn)
	returned := scrapeSum(t, crossplaneMetrics, "function_run_function_response_total", fn)
	return sent - returned
}

// functionOutage stops the function for d while routes change, and logs what
// the XRs say meanwhile.
func (w *faultWorld) functionOutage(t *testing.T, d time.Duration) time.Time {
	stopProc(t, "function", syscall.SIGKILL)
	w.mu.Lock()
	from := w.changes
	w.mu.Unlock()
	time.Sleep(d) // the outage itself, not a wait for a condition
	w.mu.Lock()
	changed := w.changes - from
	w.mu.Unlock()
	// What the outage is for: routes changing while no call can compose.
	if changed < 3 {
		t.Errorf("%d route changes during the function's %s outage, want 3 at least: lengthen E2E_FAULT_OUTAGE", changed, d)
	}
	t.Logf("after %s without the function (%d route changes meanwhile), the TenantGateways say:\n%s", d, changed, w.xrConditions(t))
	t0 := time.Now()
	startProc(t, "function")
	waitTCP(t, functionGRPC, time.Minute)
	return t0
}

// restartGrace is a kubelet's grace period for a pod that sets none
// (terminationGracePeriodSeconds, 30 s by default). On SIGTERM the API
// server's HTTP server waits up to 60 s for the connections of open
// watches (its log: "Failed to shutdown server: context deadline
// exceeded" when it is given the whole minute); a kubelet kills it sooner.
const restartGrace = 30 * time.Second

// restart stops a component with sig and starts it again, then waits with
// healthy until it serves.
func (w *faultWorld) restart(name string, sig syscall.Signal, healthy func(t *testing.T)) func(t *testing.T, _ int) time.Time {
	return func(t *testing.T, _ int) time.Time {
		t0 := time.Now()
		stopProcWithin(t, name, sig, restartGrace)
		startProc(t, name)
		healthy(t)
		return t0
	}
}

// emptyStatus removes the function's memory from every XR's status: its
// listeners, hostnames, child apexes, digests and orders, and its
// observedGeneration, as a re-created XR or a restored backup would have it,
// with every composed resource still there.
func (w *faultWorld) emptyStatus(t *testing.T, _ int) time.Time {
	t0 := time.Now()
	patch := []byte(`{"status":{"listeners":null,"hostnames":null,"childApexes":null,"digests":null,"orders":null,"observedGeneration":null,"conflicts":null}}`)
	for _, tn := range w.tenants {
		xr := tgw(t, tn.ns, "cozystack")
		if err := k8s.Status().Patch(t.Context(), xr, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(fieldOwner)); err != nil {
			t.Fatalf("cannot empty the status of TenantGateway %s: %v", tn.ns, err)
		}
	}
	return t0
}

// deleteGateway deletes one tenant's Gateway by hand (a tenant a round), the
// XR's status still remembering it. The sampler skips that Gateway until a
// new one is there, which must then have every served listener.
func (w *faultWorld) deleteGateway(t *testing.T, round int) time.Time {
	tn := w.tenants[round%len(w.tenants)]
	gw, _ := get(t, gvkGateway, tn.ns, "cozystack")
	w.mu.Lock()
	w.suspended[tn.ns] = gw.GetUID()
	w.mu.Unlock()
	t0 := time.Now()
	if err := k8s.Delete(t.Context(), gw, client.Preconditions{UID: ptrUID(gw.GetUID())}); err != nil {
		t.Fatalf("cannot delete Gateway %s/cozystack: %v", tn.ns, err)
	}
	eventually(t, faultConverge, fmt.Sprintf("a new Gateway %s/cozystack", tn.ns), func() (bool, string) {
		g, found := get(t, gvkGateway, tn.ns, "cozystack")
		return found && g.GetUID() != gw.GetUID(), show(g)
	})
	return t0
}

func ptrUID(u types.UID) *types.UID { return &u }

// envoyGatewayDown stops Envoy Gateway's controller while the churner adds
// and removes routes (and listeners of tenant-fp's Gateway), then starts it
// again; it logs what tenant-fp's XR says with the status stale.
func (w *faultWorld) envoyGatewayDown(t *testing.T, _ int) time.Time {
	stopProc(t, "envoy-gateway", syscall.SIGTERM)
	w.mu.Lock()
	from := w.changes
	w.mu.Unlock()
	gw, _ := get(t, gvkGateway, "tenant-fp", "cozystack")
	gen := gw.GetGeneration()
	eventually(t, 2*time.Minute, "tenant-fp's Gateway changed twice with Envoy Gateway down", func() (bool, string) {
		g, _ := get(t, gvkGateway, "tenant-fp", "cozystack")
		w.mu.Lock()
		defer w.mu.Unlock()
		return g.GetGeneration() >= gen+2 && w.changes >= from+6, fmt.Sprintf("generation %d (was %d), %d route changes", g.GetGeneration(), gen, w.changes-from)
	})
	// The function does not judge the Gateway by a status of an older
	// spec: it says the status is stale.
	eventually(t, settle, "tenant-fp's GatewayReady GatewayStatusStale with Envoy Gateway down", func() (bool, string) {
		s, r, m := condition(tgw(t, "tenant-fp", "cozystack"), "GatewayReady")
		return s == "False" && r == "GatewayStatusStale", fmt.Sprintf("%s/%s: %s", s, r, m)
	})
	_, _, m := condition(tgw(t, "tenant-fp", "cozystack"), "GatewayReady")
	t.Logf("Envoy Gateway down, tenant-fp's GatewayReady: GatewayStatusStale: %s", m)
	t0 := time.Now()
	startProc(t, "envoy-gateway")
	w.egProbe.restarted()
	return t0
}

// --- the upgrade: a release whose Composition composes differently ---

const (
	// upgradeConfiguration is the Configuration the upgrade updates, as
	// Crossplane named it when it installed it as a dependency.
	upgradeConfiguration = "cozystack-configuration-tenant-gateway"
	// upgradeCertManagerNS is the namespace the upgraded Composition's input
	// names for cert-manager's challenge routes.
	upgradeCertManagerNS = "fault-acme"
)

var gvkCompositionRevision = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "CompositionRevision"}

// httpAdmits lists the namespaces a Gateway's http listener admits routes
// from (its namespace selector's In values).
func httpAdmits(gw *unstructured.Unstructured) []string {
	for _, l := range slice(gw, "spec", "listeners") {
		m, _ := l.(map[string]any)
		if m["name"] != "http" {
			continue
		}
		exprs, _, _ := unstructured.NestedSlice(m, "allowedRoutes", "namespaces", "selector", "matchExpressions")
		var out []string
		for _, e := range exprs {
			em, _ := e.(map[string]any)
			vs, _, _ := unstructured.NestedStringSlice(em, "values")
			out = append(out, vs...)
		}
		return out
	}
	return nil
}

// newestRevision is the CompositionRevision of the Composition tenantgateway
// with the highest revision number: the one TenantGateways (their update
// policy Automatic) must run.
func (w *faultWorld) newestRevision(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	var newest *unstructured.Unstructured
	var top int64
	for _, r := range list(t, gvkCompositionRevision, "", client.MatchingLabels{"crossplane.io/composition-name": "tenantgateway"}) {
		if n, _, _ := unstructured.NestedInt64(r.Object, "spec", "revision"); newest == nil || n > top {
			newest, top = r.DeepCopy(), n
		}
	}
	if newest == nil {
		t.Fatal("no CompositionRevision of the Composition tenantgateway")
	}
	return newest
}

// compositionAgreed: the Configuration runs the package the test last
// updated it to (its active revision of that package, Healthy), and the
// newest CompositionRevision of tenantgateway passes the function an input
// exactly when that package's Composition does.
func (w *faultWorld) compositionAgreed(t *testing.T) (bool, string) {
	w.mu.Lock()
	ref, withInput := w.configRef, w.withInput
	w.mu.Unlock()
	if ref != "" {
		cfg, _ := get(t, gvkConfiguration, "", upgradeConfiguration)
		if s, r, m := condition(cfg, string(pkgv1.TypeHealthy)); s != string(corev1.ConditionTrue) {
			return false, fmt.Sprintf("Configuration %s Healthy %s %s: %s", upgradeConfiguration, s, r, m)
		}
		var active []string
		for _, r := range list(t, gvkConfigurationRev, "", client.MatchingLabels{pkgv1.LabelParentPackage: upgradeConfiguration}) {
			if str(&r, "spec", "desiredState") != string(pkgv1.PackageRevisionActive) {
				continue
			}
			active = append(active, str(&r, "spec", "image"))
			// A revision's own health is RevisionHealthy; it has no
			// Healthy condition (that is the package's, read above).
			if s, _, m := condition(&r, string(pkgv1.TypeRevisionHealthy)); s != string(corev1.ConditionTrue) {
				return false, fmt.Sprintf("ConfigurationRevision %s (%s) RevisionHealthy %q: %s", r.GetName(), str(&r, "spec", "image"), s, m)
			}
		}
		if len(active) != 1 || active[0] != ref {
			return false, fmt.Sprintf("Configuration %s: active revisions of %v, want one of %s", upgradeConfiguration, active, ref)
		}
	}
	rev := w.newestRevision(t)
	steps := slice(rev, "spec", "pipeline")
	if len(steps) == 0 {
		return false, "CompositionRevision " + rev.GetName() + " has no pipeline"
	}
	step, _ := steps[0].(map[string]any)
	if _, has := step["input"]; has != withInput {
		return false, fmt.Sprintf("the newest CompositionRevision %s passes an input: %t, want %t", rev.GetName(), has, withInput)
	}
	return true, ""
}

// prepareUpgrade builds and pushes, once, the next patch release of the
// TenantGateway API's Configuration: the package of package/configuration
// whose Composition passes the function an input (cert-manager's
// namespace fault-acme, read from platform settings of a name no
// EnvironmentConfig has, so the input is what counts). Every Gateway's
// port-80 listener then admits routes from fault-acme instead of
// cozy-cert-manager, and the function requires other resources.
func (w *faultWorld) prepareUpgrade(t *testing.T) {
	t.Helper()
	if w.upgradeRef != "" {
		return
	}
	cfg, found := get(t, gvkConfiguration, "", upgradeConfiguration)
	if !found {
		t.Fatalf("no Configuration %s", upgradeConfiguration)
	}
	installed := str(cfg, "spec", "package")
	i := strings.LastIndex(installed, ":")
	repo, tag := installed[:max(i, 0)], installed[i+1:]
	next, err := nextPatch(tag)
	if i < 0 || err != nil {
		t.Fatalf("Configuration %s: package %q has no version tag vX.Y.Z (%v)", upgradeConfiguration, installed, err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "package", "configuration"))); err != nil {
		t.Fatalf("cannot copy package/configuration: %v", err)
	}
	compFile := filepath.Join(dir, "tenantgateway", "composition.yaml")
	objs, err := decode(readFile("package", "configuration", "tenantgateway", "composition.yaml"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("cannot decode the Composition: %v", err)
	}
	comp := objs[0]
	steps := slice(comp, "spec", "pipeline")
	step, _ := steps[0].(map[string]any)
	step["input"] = map[string]any{
		"apiVersion":           "fn.gateway.cozystack.io/v1beta1",
		"kind":                 "Input",
		"platformConfigName":   "tenant-gateway-platform-absent",
		"certManagerNamespace": upgradeCertManagerNS,
	}
	if err := unstructured.SetNestedSlice(comp.Object, steps, "spec", "pipeline"); err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(comp.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(compFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	xp := os.Getenv("CROSSPLANE")
	if xp == "" {
		t.Fatal("CROSSPLANE (the crossplane CLI) is not set: run through make e2e")
	}
	pkg := filepath.Join(dir, "next.xpkg")
	run(t, xp, "xpkg", "build", "--package-root="+dir, "--examples-root="+filepath.Join(dir, "examples"), "--package-file="+pkg)
	// The loopback registry is the mirror the ImageConfigs of
	// examples/cluster/mirror/ point ghcr.io/cozystack at.
	run(t, xp, "xpkg", "push", "-f", pkg, strings.Replace(repo, "ghcr.io/", "127.0.0.1:5000/", 1)+":"+next)
	w.installedRef, w.upgradeRef = installed, repo+":"+next
	t.Cleanup(func() {
		// Leave the control plane on the installed release, whatever
		// happened (t.Context() is done by now).
		c := &unstructured.Unstructured{}
		c.SetGroupVersionKind(gvkConfiguration)
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: upgradeConfiguration}, c); err == nil && str(c, "spec", "package") != installed {
			if out, err := exec.Command(xp, "xpkg", "update", "configuration", installed, upgradeConfiguration).CombinedOutput(); err != nil {
				t.Errorf("cannot update Configuration %s back to %s: %v\n%s", upgradeConfiguration, installed, err, out)
			}
		}
	})
}

// nextPatch is version vX.Y.Z with Z one higher.
func nextPatch(v string) (string, error) {
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if !strings.HasPrefix(v, "v") || len(parts) != 3 {
		return "", fmt.Errorf("%q is not vX.Y.Z", v)
	}
	z, err := strconv.Atoi(parts[2])
	if err != nil {
		return "", fmt.Errorf("%q is not vX.Y.Z: %w", v, err)
	}
	return fmt.Sprintf("v%s.%s.%d", parts[0], parts[1], z+1), nil
}

// run runs a command (the crossplane CLI) and fails with its output.
func run(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
}

// upgrade updates the Configuration to the next release as docs/operations.md
// (Upgrade, step 2) tells an operator to: `crossplane xpkg update
// configuration`. The Function is not updated: the release needs no other.
func (w *faultWorld) upgrade(t *testing.T, _ int) time.Time {
	w.prepareUpgrade(t)
	return w.updateConfiguration(t, w.upgradeRef, upgradeCertManagerNS, true)
}

// rollback updates it back to the installed release (Rollback).
func (w *faultWorld) rollback(t *testing.T, _ int) time.Time {
	return w.updateConfiguration(t, w.installedRef, "cozy-cert-manager", false)
}

func (w *faultWorld) updateConfiguration(t *testing.T, ref, certManager string, withInput bool) time.Time {
	t.Helper()
	w.mu.Lock()
	w.configRef, w.certManagerNS, w.withInput = ref, certManager, withInput
	w.mu.Unlock()
	t0 := time.Now()
	run(t, os.Getenv("CROSSPLANE"), "xpkg", "update", "configuration", ref, upgradeConfiguration)
	return t0
}

// plan runs the plan (fn/cmd/plan) as docs/operations.md's upgrade steps
// start with it, on the converged platform with the churner paused:
// nothing served would change, so it exits 0; with proposed platform
// settings that name another namespace for cert-manager's challenge routes,
// every Gateway's http listener would change: listed, and it exits 2.
func (w *faultWorld) plan(t *testing.T) {
	t.Helper()
	defer w.pause()()
	w.waitConverged(t, "before the plan")
	bin := command(t, "plan")
	out, code := runCode(t, bin)
	if code != 0 {
		t.Errorf("plan on the steady platform: exit %d, want 0 (nothing served changes)\n%s", code, out)
	}
	settings := strings.Replace(platformSettings(), "certManagerNamespace: cozy-cert-manager", "certManagerNamespace: "+upgradeCertManagerNS, 1)
	file := filepath.Join(t.TempDir(), "platform.yaml")
	if err := os.WriteFile(file, []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = runCode(t, bin, "--platform-settings", file)
	if code != 2 {
		t.Errorf("plan with certManagerNamespace %s proposed: exit %d, want 2\n%s", upgradeCertManagerNS, code, out)
	}
	// The http01 tenant's port-80 listener admits the challenge routes.
	for _, want := range []string{"TenantGateway tenant-fp/cozystack: ", "listener    changed            http: fields allowedRoutes.namespaces"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan with certManagerNamespace %s proposed does not list %q\n%s", upgradeCertManagerNS, want, out)
		}
	}
}

// runCode runs a command with the test's kubeconfig and returns what it
// printed and its exit code.
func runCode(t *testing.T, name string, args ...string) (string, int) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), name, args...).CombinedOutput()
	t.Logf("%s %s:\n%s", filepath.Base(name), strings.Join(args, " "), out)
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", name, err)
	}
	return string(out), 0
}
