package gateway

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// FuzzIsolationOverRuns draws clusters from the fuzzer's bytes: nested
// namespaces three levels deep, wildcards, contests, sectionNames and ports,
// names at their length limits, full budgets, several runs with the last
// output fed back, in all four modes. Every run is judged by attackP and by
// three checks beyond it: checkServedOn on shared HTTPS tables (as Cilium
// shares one; messages "shared:"), the zone rule whatever table domain
// answers (checkZones; "zone:"), and non-interference between runs
// (checkNonInterference; "interference:").
//
// Its seed corpus runs with every `go test`. It is not among make test's
// fuzz targets: its cases are slow (several runs judged by the oracle
// each), and fuzzing finds the documented limit that
// TestZoneGuardOffItsListenerLeavesTheZone asserts (a name inside a child's
// zone answered by a route of the parent's apex on a shared HTTPS table,
// "zone: shared=true"). Fuzz it by hand:
//
//	go test -run '^$' -fuzz '^FuzzIsolationOverRuns$' -fuzztime 3000x ./fn/gateway
//
// A failing input lands in testdata/fuzz/FuzzIsolationOverRuns, already
// shrunk by the fuzzer; commit it with the fix so that go test replays it.

// A runsCase is one drawn attack: a spec and the cluster of each run.
type runsCase struct {
	Spec v1alpha1.TenantGatewaySpec
	Runs []clusterRun
}

type clusterRun struct {
	Namespaces []Namespace
	Routes     []Route
}

// runCase plays the runs, each fed the last one's output.
func runCase(t *testing.T, c runsCase) {
	t.Helper()
	var in Input
	var out *Output
	for i, r := range c.Runs {
		last, lastOut := in, out
		if i == 0 {
			in = Input{Spec: c.Spec}
		} else {
			in = fedBack(in, out)
			in.NamedNamespaces = nil
		}
		in.Namespaces, in.Routes = r.Namespaces, resolveSections(r.Routes, out)
		if out != nil {
			// The cluster holds the routes the last run wrote (zone guards).
			in.Routes = tableRoutes(t, &in, out)
		}
		out = attackP(t, &in)
		if c.Spec.CertMode != v1alpha1.CertModeEdge {
			checkServedOn(t, &in, out, true)
		}
		if i > 0 {
			checkNonInterference(t, &last, lastOut, &in, out)
		}
		if c.Spec.CertMode == v1alpha1.CertModeEdge {
			checkZones(t, &in, out, 80, true)
		} else {
			checkZones(t, &in, out, 443, false)
			checkZones(t, &in, out, 443, true)
		}
	}
}

// checkZones is the zone rule whatever table domain answers: a request
// for h inside a zone z (the host label of an admitted namespace) whose
// listener *.z the Gateway has is answered only by namespaces delegated z
// or below, or that hold h exactly (status says they are served it),
// whichever table domain took it. The oracle's reachedZone looks only at
// the answering route's own best hostname, so a parent's *.<parent> (or a
// route without hostnames) answering the names a child's routes do not
// list, in a shared table, passes it. Its messages start with "zone:".
func checkZones(t *testing.T, in *Input, out *Output, port gwapiv1.PortNumber, shared bool) {
	t.Helper()
	gw := composedGateway(out)
	if gw == nil {
		return
	}
	cluster := clusterLabels(in)
	listening := map[string]bool{}
	for _, l := range gw.Spec.Listeners {
		if h := hostOf(l); strings.HasPrefix(h, "*.") && (strings.HasPrefix(string(l.Name), prefixChild) || strings.HasPrefix(string(l.Name), prefixEdgeChild)) {
			listening[h[2:]] = true
		}
	}
	_, holds, routes := indexStatus(in, out)
	o := newOracle(t, in, out, shared)
	for _, h := range requests(in, out) {
		if port == 443 && passthroughSNI(o, h) {
			continue
		}
		// A child's bare apex is in its zone too: a wider route must not
		// answer it (it gets a pin the zone guard lists).
		zone := ""
		eachDomain(h, func(d string) bool {
			if listening[d] {
				zone = d
			}
			return zone != ""
		})
		if zone == "" {
			continue
		}
		l, rs := o.answer(port, h)
		for _, id := range rs {
			ns := routes[id].Namespace
			d, ok := delegated(in, ns, cluster[ns])
			if ok && under(d, zone) || holds[ns+" "+h] {
				continue
			}
			t.Errorf("zone: shared=%v port %d: %s answers %s on listener %s, inside zone %s, which has its own listener; namespace %s was delegated %q and holds no claim of %s", shared, port, id, h, l, zone, ns, d, h)
		}
	}
}

// checkNonInterference is what the oracle does not check, from "nothing one
// tenant creates changes what another tenant is served" (Who may attach in
// docs/design.md): when a run only adds routes to the last (same
// namespaces, the old routes unchanged), every claim the last run served
// stays served, unless its namespace added a route, or its hostname meets
// one of the new routes' (equal, or one a wildcard over the other). Its
// messages start with "interference:".
func checkNonInterference(t *testing.T, last *Input, lastOut *Output, in *Input, out *Output) {
	t.Helper()
	if len(last.Namespaces) != len(in.Namespaces) {
		return
	}
	for i := range last.Namespaces {
		if last.Namespaces[i].Name != in.Namespaces[i].Name {
			return
		}
	}
	old := map[string]Route{}
	for _, r := range last.Routes {
		old[r.ID()] = r
	}
	var added []Route
	for _, r := range in.Routes {
		o, ok := old[r.ID()]
		switch {
		case !ok:
			added = append(added, r)
		case fmt.Sprint(o) != fmt.Sprint(r):
			return
		}
		delete(old, r.ID())
	}
	if len(old) > 0 || len(added) == 0 {
		return
	}
	meets := func(ns, h string) bool {
		for _, r := range added {
			if r.Namespace == ns {
				return true
			}
			for _, a := range r.Hostnames {
				if a == h || patternCovers(a, h) || patternCovers(h, a) {
					return true
				}
			}
		}
		return false
	}
	now := map[string]v1alpha1.HostnameState{}
	for _, s := range out.Hostnames {
		now[s.Hostname+" "+s.Route] = s.State
	}
	for _, s := range lastOut.Hostnames {
		_, rest, _ := strings.Cut(s.Route, "/")
		ns, _, _ := strings.Cut(rest, "/")
		if !isServed(s.State) || meets(ns, s.Hostname) {
			continue
		}
		if st := now[s.Hostname+" "+s.Route]; !isServed(st) {
			t.Errorf("interference: routes %v were added; %s %s was %s and is now %s", routeIDs(added), s.Hostname, s.Route, s.State, st)
		}
	}
}

func routeIDs(rs []Route) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID())
	}
	return out
}

// resolveSections replaces a sectionName "@<n>" with the name of the
// last run's n-th listener (modulo their number): a tenant names what
// status.listeners showed it.
func resolveSections(routes []Route, last *Output) []Route {
	var names []string
	if last != nil {
		if gw := composedGateway(last); gw != nil {
			for _, l := range gw.Spec.Listeners {
				names = append(names, string(l.Name))
			}
		}
	}
	out := make([]Route, len(routes))
	for i, r := range routes {
		r.ParentRefs = slices.Clone(r.ParentRefs)
		for j, p := range r.ParentRefs {
			if n, ok := strings.CutPrefix(p.SectionName, "@"); ok {
				k, _ := strconv.Atoi(n)
				r.ParentRefs[j].SectionName = ""
				if len(names) > 0 {
					r.ParentRefs[j].SectionName = names[k%len(names)]
				}
			}
		}
		out[i] = r
	}
	return out
}

// checkServedOn is checkServed on shared HTTPS tables when shared (an
// implementation that, like Cilium, shares one route table across a port's
// HTTPS listeners): every route answering a request is delegated it and
// does not answer through a wildcard reaching into a zone it does not
// hold; a claim status calls refused does not answer. Its messages start
// with "shared:".
func checkServedOn(t *testing.T, in *Input, out *Output, shared bool) {
	t.Helper()
	cluster := clusterLabels(in)
	state, holds, routes := indexStatus(in, out)
	o := newOracle(t, in, out, shared)
	port := gwapiv1.PortNumber(443)
	for _, h := range requests(in, out) {
		if passthroughSNI(o, h) {
			// A TLS passthrough listener takes the connection by SNI
			// before any HTTP route table.
			continue
		}
		l, rs := o.answer(port, h)
		for _, id := range rs {
			ns := routes[id].Namespace
			if d, ok := delegated(in, ns, cluster[ns]); !ok || !under(h, d) {
				t.Errorf("shared: port %d: %s answers %s on listener %s, but namespace %s was delegated %q", port, id, h, l, ns, d)
			} else if z := reachedZone(in, cluster, routes[id], h, d); z != "" && !holds[ns+" "+h] {
				t.Errorf("shared: port %d: %s answers %s on listener %s through a wildcard reaching into zone %s, which namespace %s (delegated %s) does not hold", port, id, h, l, z, ns, d)
			}
			if s, ok := state[h+" "+id]; ok && !isServed(s) {
				t.Errorf("shared: port %d: %s answers %s on listener %s, but status says its claim is %s", port, id, h, l, s)
			}
		}
		for k, s := range state {
			hh, id, _ := strings.Cut(k, " ")
			if hh != h || !isServed(s) || strings.HasPrefix(h, "zz.") || strings.HasPrefix(id, KindTLSRoute) || s == v1alpha1.HostnamePassthrough {
				continue
			}
			if !slices.Contains(rs, id) {
				t.Errorf("shared: port %d: status says %s is %s for %s, but the Gateway answers it with %v (listener %q)", port, h, s, id, rs, l)
			}
		}
	}
}

// passthroughSNI reports whether the most specific 443 listener matching h
// is a TLS passthrough listener.
func passthroughSNI(o *oracle, h string) bool {
	best, score := gwapiv1.ProtocolType(""), -1
	for _, l := range o.listeners[443] {
		if m, s := hostMatch(hostOf(l), h); m && s > score {
			best, score = l.Protocol, s
		}
	}
	return best == gwapiv1.TLSProtocolType
}

// The drawn cluster: apex cozy.io, tenant a with nested b (and b's c), e,
// a sibling d, a namespace delegated the apex that is no publisher, one
// delegated nothing, and an attached platform namespace.
var (
	searchApex       = "cozy.io"
	searchNamespaces = []Namespace{
		labelled("tenant-root", "cozy.io"),
		labelled("cozy-a", ""),
		labelled("tenant-a", "a.cozy.io"),
		labelled("tenant-a-b", "b.a.cozy.io"),
		labelled("tenant-a-b-c", "c.b.a.cozy.io"),
		labelled("tenant-a-e", "e.a.cozy.io"),
		labelled("tenant-d", "d.cozy.io"),
		labelled("tenant-x", "cozy.io"),
		labelled("tenant-nohost", ""),
	}
	searchDomains = []string{"cozy.io", "a.cozy.io", "b.a.cozy.io", "c.b.a.cozy.io", "x.b.a.cozy.io", "x.c.b.a.cozy.io", "e.a.cozy.io", "d.cozy.io", "x.cozy.io", "api.cozy.io"}
	searchLabels  = []string{"www", "x", "b", "c", "e", "api", "*", "*", "long"}
)

func searchSpecs() []v1alpha1.TenantGatewaySpec {
	pass := []v1alpha1.DNSLabel{"api"}
	return []v1alpha1.TenantGatewaySpec{
		{Apex: searchApex, TLSPassthroughServices: pass},
		{Apex: searchApex, CertMode: v1alpha1.CertModeDNS01, DNS01: dns01Spec.DNS01, TLSPassthroughServices: pass},
		{Apex: searchApex, CertMode: v1alpha1.CertModeExistingSecret, WildcardSecretRef: &v1alpha1.LocalSecretReference{Name: "w"}, TLSPassthroughServices: pass},
		{Apex: searchApex, CertMode: v1alpha1.CertModeEdge},
	}
}

// caseGen draws a case's decisions from the fuzzer's bytes, one byte a
// decision, so that the fuzzer's minimizer, shortening the bytes, shortens
// the case: once they run out every decision takes its first choice.
type caseGen struct {
	choices []byte
}

// intn is a decision among n choices, 0 to n-1; n is at most 256.
func (g *caseGen) intn(n int) int {
	if n <= 1 || len(g.choices) == 0 {
		return 0
	}
	v := int(g.choices[0])
	g.choices = g.choices[1:]
	return v % n
}

func (g *caseGen) hostname() string {
	d := searchDomains[g.intn(len(searchDomains))]
	switch l := searchLabels[g.intn(len(searchLabels))]; l {
	case "*":
		return "*." + d
	case "long":
		// A first label as long as the hostname allows, or a little less:
		// at the limits of the short, long and Certificate names.
		n := 253 - len(d) - 1 - g.intn(25)
		return strings.Repeat("l", n) + "." + d
	default:
		if g.intn(5) == 0 {
			return d // a zone's apex itself
		}
		return l + strconv.Itoa(g.intn(3)) + "." + d
	}
}

// section is a sectionName a tenant might write: a fixed listener, the
// short, long or hash form of a hostname's pin or a child apex's listener.
func (g *caseGen) section(edge bool) string {
	pin, child := prefixHTTPS, prefixChild
	fixed := []string{ListenerHTTPS, ListenerHTTPSApex, ListenerHTTP, "tls-api"}
	if edge {
		pin, child = prefixEdge, prefixEdgeChild
		fixed = []string{ListenerEdge, ListenerEdgeApex}
	}
	h := g.hostname()
	zone := searchDomains[g.intn(len(searchDomains))]
	switch g.intn(9) {
	case 7, 8:
		// A listener the last run composed.
		return "@" + strconv.Itoa(g.intn(64))
	case 0:
		return fixed[g.intn(len(fixed))]
	case 1:
		return pin + HostKey(h)
	case 2:
		return pin + LongHostKey(h)
	case 3:
		return pin + HashHostKey(h)
	case 4:
		return child + HostKey(zone)
	case 5:
		return child + LongHostKey(zone)
	}
	return ""
}

func (g *caseGen) route(nss []Namespace, name string, edge bool) Route {
	ns := nss[g.intn(len(nss))].Name
	var hs []string
	if g.intn(10) > 0 {
		for n := 1 + g.intn(3); n > 0; n-- {
			hs = append(hs, g.hostname())
		}
	}
	r := routeTo(ns, name, hs...)
	if g.intn(10) == 0 {
		r.Kind = KindTLSRoute
	}
	if g.intn(3) == 0 {
		r.ParentRefs[0].SectionName = g.section(edge)
	}
	if g.intn(7) == 0 {
		r.ParentRefs[0].Port = []int32{80, 443}[g.intn(2)]
	}
	if g.intn(8) == 0 {
		// A second parentRef to the Gateway naming another listener.
		r.ParentRefs = append(r.ParentRefs, ParentRef{Name: "cozystack", Namespace: r.ParentRefs[0].Namespace, SectionName: g.section(edge)})
	}
	if g.intn(20) == 0 {
		r.Solver = true
	}
	if g.intn(30) == 0 {
		r.ParentRefs[0].CoreGroup = true
	}
	return r
}

// cluster draws the namespaces of a run: tenant-root always, the others
// mostly; sometimes fillers that fill the listener budget, and idle nested
// tenants of a.
func (g *caseGen) cluster() []Namespace {
	var nss []Namespace
	for i, n := range searchNamespaces {
		if i == 0 || g.intn(5) > 0 {
			nss = append(nss, n)
		}
	}
	return nss
}

func (g *caseGen) fill(spec v1alpha1.TenantGatewaySpec) ([]Namespace, []Route) {
	budget := MaxListeners - 3 - len(spec.TLSPassthroughServices)
	if spec.CertMode == v1alpha1.CertModeEdge {
		budget = MaxListeners - 2
	}
	n := budget - 4 + g.intn(7)
	var nss []Namespace
	var routes []Route
	for i := range n {
		ns := fmt.Sprintf("tenant-f%02d", i)
		nss = append(nss, labelled(ns, fmt.Sprintf("f%02d.cozy.io", i)))
		routes = append(routes, routeTo(ns, "www", fmt.Sprintf("www.f%02d.cozy.io", i)))
	}
	for i := range g.intn(3) * 10 {
		nss = append(nss, labelled(fmt.Sprintf("tenant-a-i%02d", i), fmt.Sprintf("i%02d.a.cozy.io", i)))
	}
	return nss, routes
}

// newCase draws a case: a first run, then up to two more, each changing
// a route, a namespace or a sectionName of the last.
func (g *caseGen) newCase(spec v1alpha1.TenantGatewaySpec) runsCase {
	edge := spec.CertMode == v1alpha1.CertModeEdge
	if g.intn(3) > 0 {
		spec.AttachedNamespaces = []v1alpha1.DNSLabel{"cozy-a"}
	}
	nss := g.cluster()
	var routes []Route
	for i := range 1 + g.intn(6) {
		routes = append(routes, g.route(nss, fmt.Sprintf("r%d", i), edge))
	}
	var fillNS []Namespace
	var fillRoutes []Route
	if g.intn(4) == 0 {
		fillNS, fillRoutes = g.fill(spec)
	}
	c := runsCase{Spec: spec, Runs: []clusterRun{{Namespaces: append(slices.Clone(nss), fillNS...), Routes: append(slices.Clone(routes), fillRoutes...)}}}
	for run, runs := 1, 1+g.intn(3); run < runs; run++ {
		switch g.intn(6) {
		case 0, 4, 5:
			routes = append(routes, g.route(nss, fmt.Sprintf("n%d", run), edge))
		case 1:
			if len(routes) > 0 {
				routes = slices.Delete(slices.Clone(routes), 0, 1)
			}
		case 2:
			nss = g.cluster()
		case 3:
			if len(routes) > 0 {
				i := g.intn(len(routes))
				routes = slices.Clone(routes)
				r := routes[i]
				r.ParentRefs = slices.Clone(r.ParentRefs)
				r.ParentRefs[0].SectionName = g.section(edge)
				routes[i] = r
			}
		}
		c.Runs = append(c.Runs, clusterRun{Namespaces: append(slices.Clone(nss), fillNS...), Routes: append(slices.Clone(routes), fillRoutes...)})
	}
	return c
}

func FuzzIsolationOverRuns(f *testing.F) {
	for i := range int64(16) {
		b := make([]byte, 96)
		rand.New(rand.NewSource(i)).Read(b)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g := &caseGen{choices: b}
		specs := searchSpecs()
		runCase(t, g.newCase(specs[g.intn(len(specs))]))
	})
}
