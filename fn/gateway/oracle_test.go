package gateway

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// The oracle plays the Gateway's controller on the composed Gateway: which
// route answers a request for a hostname, using apimachinery's selectors on
// the namespaces' labels and the Gateway API precedence rules (the most
// specific listener hostname takes the request; among the routes attached to
// it, an exact route hostname beats a wildcard, a longer wildcard a shorter
// one, and a route without hostnames comes last).

// hostMatch reports whether pattern (exact, "*.d", or "" for any) matches the
// concrete hostname h, and how specific the match is (higher is better).
func hostMatch(pattern, h string) (bool, int) {
	switch {
	case pattern == "":
		return true, 0
	case strings.HasPrefix(pattern, "*."):
		d := pattern[2:]
		if strings.HasSuffix(h, "."+d) {
			return true, 1 + len(d)
		}
		return false, 0
	default:
		if pattern == h {
			return true, 10000
		}
		return false, 0
	}
}

func kindAllowed(l gwapiv1.Listener, kind string) bool {
	switch l.Protocol {
	case gwapiv1.TLSProtocolType:
		if kind != KindTLSRoute {
			return false
		}
	default:
		if kind != KindHTTPRoute {
			return false
		}
	}
	if l.AllowedRoutes == nil || len(l.AllowedRoutes.Kinds) == 0 {
		return true
	}
	for _, k := range l.AllowedRoutes.Kinds {
		if string(k.Kind) == kind {
			return true
		}
	}
	return false
}

// answer is the routes that answer a request for h on a port of the composed
// Gateway, and the listener whose virtual host takes it. Envoy Gateway keeps
// one route table per HTTP port (every plain-HTTP listener of the port
// shares it) and one per HTTPS listener, chosen by SNI (the most specific
// listener hostname); sharedHTTPS plays an implementation that shares one
// table across a port's HTTPS listeners too (Cilium). In a table the request
// takes the exact domain, else the longest wildcard suffix, else "*".
func answer(t *testing.T, in *Input, out *Output, port gwapiv1.PortNumber, h string) (string, []string) {
	t.Helper()
	return answerIn(t, in, out, port, h, false)
}

func answerIn(t *testing.T, in *Input, out *Output, port gwapiv1.PortNumber, h string, sharedHTTPS bool) (string, []string) {
	t.Helper()
	return newOracle(t, in, out, sharedHTTPS).answer(port, h)
}

// An oracle holds the route tables of one composed Gateway.
type oracle struct {
	listeners map[gwapiv1.PortNumber][]gwapiv1.Listener
	// shared is the table of a port whose listeners share one; else
	// perListener holds one table per listener.
	shared      map[gwapiv1.PortNumber]map[string][]vhost
	perListener map[string]map[string][]vhost
	// guards are the zone guards composed: they take a zone's requests
	// in the table and answer none but their one path.
	guards map[string]bool
}

func newOracle(t *testing.T, in *Input, out *Output, sharedHTTPS bool) *oracle {
	t.Helper()
	o := &oracle{listeners: map[gwapiv1.PortNumber][]gwapiv1.Listener{}, shared: map[gwapiv1.PortNumber]map[string][]vhost{}, perListener: map[string]map[string][]vhost{}, guards: map[string]bool{}}
	for _, r := range composedRoutes(t, out) {
		o.guards[r.ID()] = true
	}
	gw := composedGateway(out)
	if gw == nil {
		return o
	}
	for _, l := range gw.Spec.Listeners {
		o.listeners[l.Port] = append(o.listeners[l.Port], l)
	}
	routes := tableRoutes(t, in, out)
	for port, onPort := range o.listeners {
		if onPort[0].Protocol == gwapiv1.HTTPProtocolType || sharedHTTPS {
			var table []gwapiv1.Listener
			for _, l := range onPort {
				if l.Protocol != gwapiv1.TLSProtocolType {
					table = append(table, l)
				}
			}
			o.shared[port] = routeTable(t, in, routes, table, onPort)
			continue
		}
		for _, l := range onPort {
			o.perListener[string(l.Name)] = routeTable(t, in, routes, []gwapiv1.Listener{l}, onPort)
		}
	}
	return o
}

func (o *oracle) answer(port gwapiv1.PortNumber, h string) (string, []string) {
	onPort := o.listeners[port]
	vhosts, ok := o.shared[port]
	if !ok {
		// SNI picks the listener: the most specific hostname.
		var best *gwapiv1.Listener
		bestScore := -1
		for i := range onPort {
			if m, s := hostMatch(hostOf(onPort[i]), h); m && s > bestScore {
				best, bestScore = &onPort[i], s
			}
		}
		if best == nil {
			return "", nil
		}
		vhosts = o.perListener[string(best.Name)]
	}
	domain := pickDomain(vhosts, h)
	if domain == "" {
		return "", nil
	}
	var routes []string
	listener := ""
	for _, e := range vhosts[domain] {
		listener = e.listener
		for _, r := range e.routes {
			if !o.guards[r] {
				routes = append(routes, r)
			}
		}
	}
	sort.Strings(routes)
	return listener, slices.Compact(routes)
}

// A vhost is one listener's entry for a domain of a route table, and the
// routes under it.
type vhost struct {
	listener string
	routes   []string
}

// routeTable is the route table Envoy Gateway builds from the listeners
// given: every route attached to a listener adds the hostnames its own
// intersect with the listener's (the Gateway API's hostname intersection),
// less those that equal the hostname of another listener on the port
// (listener isolation: the more specific listener takes them). Domains map
// to one entry per listener listing them: two entries are a domain listed
// twice, which Envoy refuses with the whole table.
func routeTable(t *testing.T, in *Input, routes []Route, table, onPort []gwapiv1.Listener) map[string][]vhost {
	t.Helper()
	cluster := clusterLabels(in)
	out := map[string][]vhost{}
	for _, l := range table {
		sel, err := metav1.LabelSelectorAsSelector(l.AllowedRoutes.Namespaces.Selector)
		if err != nil {
			t.Fatal(err)
		}
		byDomain := map[string][]string{}
		for _, r := range routes {
			set, ok := cluster[r.Namespace]
			if !ok {
				set = labels.Set{kube.LabelNamespaceName: r.Namespace}
			}
			if !oracleAttaches(in, r, l) || !sel.Matches(set) || !kindAllowed(l, r.Kind) {
				continue
			}
			for _, d := range intersections(r.Hostnames, l, onPort) {
				byDomain[d] = append(byDomain[d], r.ID())
			}
		}
		for d, rs := range byDomain {
			out[d] = append(out[d], vhost{listener: string(l.Name), routes: rs})
		}
	}
	return out
}

// intersections are the domains a route with these hostnames gets on
// listener l, written from the Gateway API's rules: no route hostnames take
// the listener's (or "*"); a route hostname and a listener hostname
// intersect as the more specific of the two when one matches the other;
// then the hostnames of the port's other listeners are taken out.
func intersections(routeHosts []string, l gwapiv1.Listener, onPort []gwapiv1.Listener) []string {
	lh := hostOf(l)
	var ds []string
	if len(routeHosts) == 0 {
		ds = []string{cmp.Or(lh, "*")}
	}
	for _, rh := range routeHosts {
		if !validHostname(rh) {
			// The API server refuses a route with a hostname the
			// Gateway API schema does not allow; inputs that hold one
			// are judged as if it were left out.
			continue
		}
		switch {
		case lh == "" || lh == rh:
			ds = append(ds, rh)
		case patternCovers(lh, rh):
			ds = append(ds, rh)
		case patternCovers(rh, lh):
			ds = append(ds, lh)
		}
	}
	var out []string
	for _, d := range ds {
		other := slices.ContainsFunc(onPort, func(o gwapiv1.Listener) bool { return o.Name != l.Name && hostOf(o) != "" && hostOf(o) == d })
		if !other && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// patternCovers reports whether wildcard pattern p matches every name of q
// (a hostname or a narrower wildcard), q != p.
func patternCovers(p, q string) bool {
	if !strings.HasPrefix(p, "*.") {
		return false
	}
	return strings.HasSuffix(strings.TrimPrefix(q, "*"), "."+p[2:]) && q != p
}

// pickDomain is Envoy's virtual host selection for a request for h: the
// exact domain, else the longest wildcard suffix, else "*".
func pickDomain(vhosts map[string][]vhost, h string) string {
	if _, ok := vhosts[h]; ok {
		return h
	}
	best := ""
	for d := range vhosts {
		if strings.HasPrefix(d, "*.") && strings.HasSuffix(h, d[1:]) && len(d) > len(best) {
			best = d
		}
	}
	if best != "" {
		return best
	}
	if _, ok := vhosts["*"]; ok {
		return "*"
	}
	return ""
}

// checkTables is what Envoy judges with everything at once: no route table
// lists a domain twice (Envoy refuses the table whole, and every listener
// sharing it stops updating), and no two filter chains of a port match the
// same server name (Envoy refuses the port's listener whole). Port-80 tables
// are shared by every plain-HTTP listener of the port; with sharedHTTPS the
// HTTPS listeners of 443 share one too.
func checkTables(t *testing.T, in *Input, out *Output, sharedHTTPS bool) {
	t.Helper()
	gw := composedGateway(out)
	if gw == nil {
		return
	}
	byPort := map[gwapiv1.PortNumber][]gwapiv1.Listener{}
	for _, l := range gw.Spec.Listeners {
		byPort[l.Port] = append(byPort[l.Port], l)
	}
	routes := tableRoutes(t, in, out)
	for port, onPort := range byPort {
		var shared []gwapiv1.Listener
		for _, l := range onPort {
			if l.Protocol == gwapiv1.HTTPProtocolType || sharedHTTPS && l.Protocol == gwapiv1.HTTPSProtocolType {
				shared = append(shared, l)
			}
		}
		for d, es := range routeTable(t, in, routes, shared, onPort) {
			if len(es) > 1 {
				t.Errorf("port %d: the shared route table lists domain %s under %d listeners (%v): Envoy refuses the table", port, d, len(es), es)
			}
		}
		// Filter chains: one per HTTPS listener (its hostname), one per
		// TLSRoute attached to a passthrough listener (the hostnames
		// it intersects).
		chains := map[string]string{}
		add := func(sni, what string) {
			if prev, ok := chains[sni]; ok {
				t.Errorf("port %d: two filter chains match server name %s (%s and %s): Envoy refuses the listener", port, sni, prev, what)
			}
			chains[sni] = what
		}
		for _, l := range onPort {
			switch l.Protocol {
			case gwapiv1.HTTPSProtocolType:
				add(hostOf(l), "listener "+string(l.Name))
			case gwapiv1.TLSProtocolType:
				for d, es := range routeTable(t, in, routes, []gwapiv1.Listener{l}, onPort) {
					for _, e := range es {
						for _, r := range e.routes {
							add(d, r+" on "+e.listener)
						}
					}
				}
			}
		}
	}
}

// oracleAttaches reports whether a parentRef of r names the Gateway and, by
// its sectionName and port when set, the listener (Gateway API
// ParentReference semantics).
func oracleAttaches(in *Input, r Route, l gwapiv1.Listener) bool {
	for _, p := range r.ParentRefs {
		ns := p.Namespace
		if ns == "" {
			ns = r.Namespace
		}
		if p.CoreGroup || p.Group != "" && p.Group != gwapiv1.GroupName || p.Kind != "" && p.Kind != "Gateway" || ns != in.Namespace || p.Name != in.Name {
			continue
		}
		if (p.SectionName == "" || p.SectionName == string(l.Name)) && (p.Port == 0 || p.Port == l.Port) {
			return true
		}
	}
	return false
}

// requests are the concrete hostnames worth asking for: every claimed exact
// hostname, a name under every wildcard claimed or listened on.
func requests(in *Input, out *Output) []string {
	seen := map[string]bool{}
	add := func(h string) {
		// A hostname the Gateway API schema refuses never reaches a
		// Gateway: the API server rejects the route.
		if !validHostname(h) {
			return
		}
		if strings.HasPrefix(h, "*.") {
			h = "zz." + h[2:]
		}
		if h != "" {
			seen[h] = true
		}
	}
	for _, r := range in.Routes {
		for _, h := range r.Hostnames {
			add(h)
		}
	}
	if gw := composedGateway(out); gw != nil {
		for _, l := range gw.Spec.Listeners {
			add(hostOf(l))
		}
	}
	var hs []string
	for h := range seen {
		hs = append(hs, h)
	}
	sort.Strings(hs)
	return hs
}

// indexStatus indexes what status says by "<hostname> <route>", which
// namespaces it says hold a name (a namespace served a name exactly by one
// route may be served it by any: its routes share the listener that takes
// it), as "<namespace> <hostname>", and the routes by ID.
func indexStatus(in *Input, out *Output) (map[string]v1alpha1.HostnameState, map[string]bool, map[string]Route) {
	state := map[string]v1alpha1.HostnameState{}
	holds := map[string]bool{}
	for _, s := range out.Hostnames {
		state[s.Hostname+" "+s.Route] = s.State
		if _, rest, ok := strings.Cut(s.Route, "/"); ok && isServed(s.State) {
			ns, _, _ := strings.Cut(rest, "/")
			holds[ns+" "+s.Hostname] = true
		}
	}
	routes := make(map[string]Route, len(in.Routes))
	for _, r := range in.Routes {
		routes[r.ID()] = r
	}
	return state, holds, routes
}

// checkServed is the rule of docs/design.md as the Gateway will apply it:
// every route answering a request for h is from a namespace delegated h, a
// route whose claim of h status says is served answers it, and a route whose
// claim status says is refused does not. TLSRoute claims and passthrough
// hostnames are not asked for: the oracle plays HTTP only.
const skipTLS = true

func checkServed(t *testing.T, in *Input, out *Output, ports ...gwapiv1.PortNumber) {
	t.Helper()
	main := len(ports) == 0
	if len(ports) == 0 {
		ports = []gwapiv1.PortNumber{443}
		if in.Spec.CertMode == v1alpha1.CertModeEdge {
			ports = []gwapiv1.PortNumber{80}
		}
	}
	cluster := clusterLabels(in)
	state, holds, routes := indexStatus(in, out)
	o := newOracle(t, in, out, false)
	for _, port := range ports {
		for _, h := range requests(in, out) {
			l, rs := o.answer(port, h)
			for _, id := range rs {
				ns := routes[id].Namespace
				if d, ok := delegated(in, ns, cluster[ns]); !ok || !under(h, d) {
					t.Errorf("port %d: %s answers %s on listener %s, but namespace %s was delegated %q", port, id, h, l, ns, d)
				} else if z := reachedZone(in, cluster, routes[id], h, d); z != "" && !holds[ns+" "+h] {
					t.Errorf("port %d: %s answers %s on listener %s through a wildcard reaching into zone %s, which namespace %s (delegated %s) does not hold", port, id, h, l, z, ns, d)
				}
				if s, ok := state[h+" "+id]; ok && !isServed(s) {
					t.Errorf("port %d: %s answers %s on listener %s, but status says its claim is %s", port, id, h, l, s)
				}
			}
			for k, s := range state {
				hh, id, _ := strings.Cut(k, " ")
				if !main || hh != h || !isServed(s) || strings.HasPrefix(h, "zz.") || (skipTLS && strings.HasPrefix(id, KindTLSRoute)) || (skipTLS && s == v1alpha1.HostnamePassthrough) {
					continue
				}
				if !slices.Contains(rs, id) {
					t.Errorf("port %d: status says %s is %s for %s, but the Gateway answers it with %v (listener %q)", port, h, s, id, rs, l)
				}
			}
		}
	}
}

// reachedZone is the zone rule, written from docs/design.md rather than the
// function's code: a route answers h through the most specific of its
// hostnames that matches h; when that is a wildcard *.D, no zone (the host
// label of a namespace admitted to this Gateway) more specific than the
// claimant's delegation d may hold D. It returns the zone reached into, or "".
// (A namespace's own wildcard *.d answering a name of a child zone without a
// listener is the parent's, as DNS would have it.)
func reachedZone(in *Input, cluster map[string]labels.Set, r Route, h, d string) string {
	p, best := "", -1
	for _, rh := range r.Hostnames {
		if m, s := hostMatch(rh, h); m && s > best {
			p, best = rh, s
		}
	}
	if !strings.HasPrefix(p, "*.") {
		return ""
	}
	found := ""
	for _, set := range cluster {
		z := set[kube.LabelNamespaceHost]
		if set[kube.LabelNamespaceGateway] != in.Namespace || z == "" || z == d || !under(z, d) {
			continue
		}
		if D := p[2:]; (D == z || under(D, z)) && len(z) > len(found) {
			found = z
		}
	}
	return found
}

// servedOn443 reports whether a TLS client reaching h on port 443 gets the
// route id of the given kind, by SNI: the most specific 443 listener takes
// the connection; a TLSRoute is served only on a listener whose protocol is
// TLS and whose kinds list TLSRoute, an HTTPRoute only on an HTTPS listener.
func servedOn443(o *oracle, out *Output, kind, h, id string) bool {
	gw := composedGateway(out)
	var best *int
	score := -1
	for i := range gw.Spec.Listeners {
		l := gw.Spec.Listeners[i]
		if l.Port != 443 {
			continue
		}
		if m, s := hostMatch(hostOf(l), h); m && s > score {
			j := i
			best, score = &j, s
		}
	}
	if best == nil {
		return false
	}
	l := gw.Spec.Listeners[*best]
	if !kindAllowed(l, kind) {
		return false
	}
	_, rs := o.answer(443, h)
	return slices.Contains(rs, id)
}

// checkStatusKinds is checkServed for what the HTTP oracle does not play:
// every hostname status says is served on port 443 is served to its route's
// kind by the listener that takes its SNI.
func checkStatusKinds(t *testing.T, in *Input, out *Output) {
	t.Helper()
	if in.Spec.CertMode == v1alpha1.CertModeEdge || composedGateway(out) == nil {
		return
	}
	o := newOracle(t, in, out, false)
	for _, h := range out.Hostnames {
		kind, _, _ := strings.Cut(h.Route, "/")
		if isServed(h.State) && validHostname(h.Hostname) && !strings.HasPrefix(h.Hostname, "*.") && !servedOn443(o, out, kind, h.Hostname, h.Route) {
			t.Errorf("status says %s %s is %s (%s), but the 443 listener that takes %s does not serve it a %s", h.Hostname, h.Route, h.State, h.Message, h.Hostname, kind)
		}
	}
}
