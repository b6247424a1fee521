package gateway

import (
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
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

// routeMatch is hostMatch for a route's hostnames against a request that the
// listener already took.
func routeMatch(r Route, h string) (bool, int) {
	if len(r.Hostnames) == 0 {
		return true, 0
	}
	best, ok := -1, false
	for _, p := range r.Hostnames {
		if m, s := hostMatch(p, h); m && s > best {
			best, ok = s, true
		}
	}
	return ok, best
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
// Gateway, and the listener that took it.
func answer(t *testing.T, in *Input, out *Output, port gwapiv1.PortNumber, h string) (string, []string) {
	t.Helper()
	gw := composedGateway(out)
	if gw == nil {
		return "", nil
	}
	cluster := clusterLabels(in)
	var best *gwapiv1.Listener
	bestScore := -1
	for i := range gw.Spec.Listeners {
		l := &gw.Spec.Listeners[i]
		if l.Port != port {
			continue
		}
		if m, s := hostMatch(hostOf(*l), h); m && s > bestScore {
			best, bestScore = l, s
		}
	}
	if best == nil {
		return "", nil
	}
	sel, err := metav1.LabelSelectorAsSelector(best.AllowedRoutes.Namespaces.Selector)
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	top := -1
	for _, r := range in.Routes {
		set, ok := cluster[r.Namespace]
		if !ok {
			set = labels.Set{LabelNamespaceName: r.Namespace}
		}
		if !oracleAttaches(in, r, *best) || !sel.Matches(set) || !kindAllowed(*best, r.Kind) {
			continue
		}
		// A route attaches only if one of its hostnames intersects the
		// listener's.
		if m, s := routeMatch(r, h); m {
			switch {
			case s > top:
				routes, top = []string{r.ID()}, s
			case s == top:
				routes = append(routes, r.ID())
			}
		}
	}
	sort.Strings(routes)
	return string(best.Name), routes
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
		if p.Group != "" && p.Group != gwapiv1.GroupName || p.Kind != "" && p.Kind != "Gateway" || ns != in.Namespace || p.Name != in.Name {
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
	state := map[string]v1alpha1.HostnameState{}
	for _, s := range out.Hostnames {
		state[s.Hostname+" "+s.Route] = s.State
	}
	routeNS := map[string]string{}
	for _, r := range in.Routes {
		routeNS[r.ID()] = r.Namespace
	}
	for _, port := range ports {
		for _, h := range requests(in, out) {
			l, rs := answer(t, in, out, port, h)
			for _, id := range rs {
				ns := routeNS[id]
				if d, ok := delegated(in, ns, cluster[ns]); !ok || !under(h, d) {
					t.Errorf("port %d: %s answers %s on listener %s, but namespace %s was delegated %q", port, id, h, l, ns, d)
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

// servedOn443 reports whether a TLS client reaching h on port 443 gets the
// route id of the given kind, by SNI: the most specific 443 listener takes
// the connection; a TLSRoute is served only on a listener whose protocol is
// TLS and whose kinds list TLSRoute, an HTTPRoute only on an HTTPS listener.
func servedOn443(t *testing.T, in *Input, out *Output, kind, h, id string) bool {
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
	_, rs := answer(t, in, out, 443, h)
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
	for _, h := range out.Hostnames {
		kind, _, _ := strings.Cut(h.Route, "/")
		if isServed(h.State) && validHostname(h.Hostname) && !strings.HasPrefix(h.Hostname, "*.") && !servedOn443(t, in, out, kind, h.Hostname, h.Route) {
			t.Errorf("status says %s %s is %s (%s), but the 443 listener that takes %s does not serve it a %s", h.Hostname, h.Route, h.State, h.Message, h.Hostname, kind)
		}
	}
}
