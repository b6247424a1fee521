package envoy

import (
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// A Condition is the part of a status condition a test asserts.
type Condition struct {
	Type   string
	Status metav1.ConditionStatus
	Reason string
}

// Condition types and reasons the helpers use.
const (
	typeAccepted      = "Accepted"
	reasonAccepted    = "Accepted"
	reasonListenersNV = "ListenersNotValid"
)

// Conditions projects status conditions, sorted by type.
func Conditions(cs []metav1.Condition) []Condition {
	out := make([]Condition, 0, len(cs))
	for _, c := range cs {
		out = append(out, Condition{Type: c.Type, Status: c.Status, Reason: c.Reason})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

// GatewayAccepted is the Gateway's Accepted condition. The translator sets
// it only to refuse the Gateway (bad parameters or addresses); otherwise
// Envoy Gateway's Kubernetes provider derives it from the listeners when
// it writes status, and so does this: True/Accepted when every listener is
// accepted, True/ListenersNotValid when some are, False/ListenersNotValid
// when none is. (Programmed needs the proxy's Service to have an address,
// which only a cluster gives; it is not judged offline.)
func (r *Result) GatewayAccepted() Condition {
	for _, c := range r.Gateway.Status.Conditions {
		if c.Type == typeAccepted {
			return Condition{Type: c.Type, Status: c.Status, Reason: c.Reason}
		}
	}
	accepted := 0
	for _, l := range r.Gateway.Status.Listeners {
		if hasTrue(l.Conditions, typeAccepted) {
			accepted++
		}
	}
	switch {
	case accepted == len(r.Gateway.Status.Listeners):
		return Condition{Type: typeAccepted, Status: metav1.ConditionTrue, Reason: reasonAccepted}
	case accepted > 0:
		return Condition{Type: typeAccepted, Status: metav1.ConditionTrue, Reason: reasonListenersNV}
	default:
		return Condition{Type: typeAccepted, Status: metav1.ConditionFalse, Reason: reasonListenersNV}
	}
}

func hasTrue(cs []metav1.Condition, typ string) bool {
	return slices.ContainsFunc(cs, func(c metav1.Condition) bool { return c.Type == typ && c.Status == metav1.ConditionTrue })
}

// A ListenerStatus is what the translator says of one listener.
type ListenerStatus struct {
	Conditions     []Condition
	AttachedRoutes int32
	SupportedKinds []string
}

// Listeners maps every listener's name to its status.
func (r *Result) Listeners() map[string]ListenerStatus {
	out := map[string]ListenerStatus{}
	for _, l := range r.Gateway.Status.Listeners {
		s := ListenerStatus{Conditions: Conditions(l.Conditions), AttachedRoutes: l.AttachedRoutes}
		for _, k := range l.SupportedKinds {
			s.SupportedKinds = append(s.SupportedKinds, string(k.Kind))
		}
		out[string(l.Name)] = s
	}
	return out
}

// RouteParents maps a route's parent statuses for the judged Gateway by
// the parentRef's sectionName ("" for none). kind is HTTPRoute or TLSRoute.
func (r *Result) RouteParents(kind, namespace, name string) (map[string][]Condition, error) {
	parents, err := r.parentsOf(kind, namespace, name)
	if err != nil {
		return nil, err
	}
	out := map[string][]Condition{}
	for _, p := range parents {
		ns := namespace
		if p.ParentRef.Namespace != nil {
			ns = string(*p.ParentRef.Namespace)
		}
		if string(p.ParentRef.Name) != r.Gateway.Name || ns != r.Gateway.Namespace {
			continue
		}
		section := ""
		if p.ParentRef.SectionName != nil {
			section = string(*p.ParentRef.SectionName)
		}
		out[section] = Conditions(p.Conditions)
	}
	return out, nil
}

// parentsOf is a route's parent statuses, for every Gateway.
func (r *Result) parentsOf(kind, namespace, name string) ([]gwapiv1.RouteParentStatus, error) {
	switch kind {
	case kindHTTPRoute:
		for _, h := range r.HTTPRoutes {
			if h.Namespace == namespace && h.Name == name {
				return h.Status.Parents, nil
			}
		}
	case kindTLSRoute:
		for _, t := range r.TLSRoutes {
			if t.Namespace == namespace && t.Name == name {
				return t.Status.Parents, nil
			}
		}
	default:
		return nil, fmt.Errorf("cannot judge routes of kind %q", kind)
	}
	return nil, fmt.Errorf("the translator's output has no %s %s/%s", kind, namespace, name)
}

// A Presented is what a TLS client gets for one SNI name.
type Presented struct {
	// FilterChain is the chain Envoy picks.
	FilterChain string
	// Secret is the certificate presented ("<namespace>/<name>") and
	// DNSNames its SANs; both empty for a passthrough chain.
	Secret   string   `json:",omitempty"`
	DNSNames []string `json:",omitempty"`
	// Backends are where a passthrough chain sends the connection.
	Backends []string `json:",omitempty"`
}

// SNI maps every server name the Envoy listener of a Gateway port selects
// a filter chain by to what it presents.
func (r *Result) SNI(gatewayPort int32) map[string]Presented {
	out := map[string]Presented{}
	l, ok := r.XDS.Listener(gatewayPort)
	if !ok {
		return out
	}
	for _, fc := range l.FilterChains {
		for _, n := range fc.ServerNames {
			out[n] = r.presented(fc)
		}
	}
	return out
}

// Presents is what a TLS client connecting to a Gateway port with SNI
// host gets, as Envoy picks the filter chain.
func (r *Result) Presents(gatewayPort int32, host string) (Presented, error) {
	s, err := r.XDS.Serve(gatewayPort, host)
	if err != nil {
		return Presented{}, err
	}
	return r.presented(s.FilterChain), nil
}

func (r *Result) presented(fc FilterChain) Presented {
	p := Presented{FilterChain: fc.Name, Backends: r.backendsOf(fc.Clusters)}
	if len(fc.Secrets) > 0 {
		p.Secret = fc.Secrets[0]
		for _, s := range r.Secrets {
			if s.Key() == p.Secret {
				p.DNSNames = s.DNSNames
			}
		}
	}
	return p
}

// Uncovered maps every domain the route tables of a Gateway port serve
// over TLS to the certificate presented for it, when that certificate's
// SANs do not cover the domain: clients see a name mismatch.
func (r *Result) Uncovered(gatewayPort int32) map[string]Presented {
	out := map[string]Presented{}
	for d := range r.DomainBackends(gatewayPort) {
		p, err := r.Presents(gatewayPort, d)
		if err != nil || p.Secret == "" {
			continue
		}
		if !slices.ContainsFunc(p.DNSNames, func(san string) bool { return Covers(san, d) }) {
			out[d] = p
		}
	}
	return out
}

// Covers says whether a certificate SAN covers a host name the way TLS
// clients check it: exactly, or a wildcard for exactly one label
// (*.example.org covers a.example.org, not a.b.example.org nor
// example.org).
func Covers(san, host string) bool {
	san, host = strings.ToLower(san), strings.ToLower(host)
	if san == host {
		return true
	}
	if rest, ok := strings.CutPrefix(san, "*."); ok {
		label, parent, found := strings.Cut(host, ".")
		return found && label != "" && label != "*" && parent == rest
	}
	return san == host
}

// Backends is where a request for http(s)://host/ on a Gateway port goes:
// the Services ("<namespace>/<name>:<port>") behind the clusters of the
// first route that matches "/", in the virtual host Envoy picks.
func (r *Result) Backends(gatewayPort int32, host string) ([]string, error) {
	route, err := r.route(gatewayPort, host)
	if err != nil {
		return nil, err
	}
	return r.backendsOf(route.Clusters), nil
}

// route is the route a request for host/ on a Gateway port takes.
func (r *Result) route(gatewayPort int32, host string) (Route, error) {
	return r.routeFor(gatewayPort, host, "/")
}

// RouteFor is the route a request for path on host takes on a Gateway port,
// in the virtual host Envoy picks, and the Services ("<namespace>/<name>:
// <port>") behind its clusters (none when it redirects or answers itself).
func (r *Result) RouteFor(gatewayPort int32, host, path string) (Route, []string, error) {
	rt, err := r.routeFor(gatewayPort, host, path)
	if err != nil {
		return Route{}, nil, err
	}
	return rt, r.backendsOf(rt.Clusters), nil
}

func (r *Result) routeFor(gatewayPort int32, host, path string) (Route, error) {
	s, err := r.XDS.Serve(gatewayPort, host)
	if err != nil {
		return Route{}, err
	}
	if s.VirtualHost == nil {
		return Route{}, fmt.Errorf("port %d, filter chain %s: no virtual host for %q (404)", gatewayPort, s.FilterChain.Name, host)
	}
	rt, ok := s.VirtualHost.RouteFor(path)
	if !ok {
		return Route{}, fmt.Errorf("port %d, virtual host %s: no route for %q%s (404)", gatewayPort, s.VirtualHost.Name, host, path)
	}
	return rt, nil
}

// DomainBackends maps every domain the route tables of a Gateway port
// name to Backends(gatewayPort, domain): the Services a request for it
// reaches, after Envoy has picked the filter chain by SNI and the virtual
// host by Host. A domain whose request does not reach a Service (a
// redirect, a 404) maps to nil.
func (r *Result) DomainBackends(gatewayPort int32) map[string][]string {
	out := map[string][]string{}
	l, ok := r.XDS.Listener(gatewayPort)
	if !ok {
		return out
	}
	for _, fc := range l.FilterChains {
		rc, ok := r.XDS.RouteConfig(fc.RouteConfig)
		if !ok {
			continue
		}
		for _, vh := range rc.VirtualHosts {
			for _, d := range vh.Domains {
				if _, done := out[d]; done || d == "*" {
					continue
				}
				b, _ := r.Backends(gatewayPort, d)
				out[d] = b
			}
		}
	}
	return out
}

// RedirectsToHTTPS says whether http://host/ on port 80 answers with a 301
// to https, the same host and path; the error says what happens instead.
func (r *Result) RedirectsToHTTPS(host string) error {
	rt, err := r.route(80, host)
	if err != nil {
		return err
	}
	want := &Redirect{Scheme: "https", Code: 301}
	if d := cmp.Diff(want, rt.Redirect); d != "" {
		return fmt.Errorf("http://%s/ takes route %s, which does not redirect to https with a 301 (-want +got):\n%s", host, rt.Name, d)
	}
	return nil
}

// backendsOf names the Services behind clusters, through the cluster IPs
// the harness gave them; an endpoint that is not one stays an address.
func (r *Result) backendsOf(clusters []string) []string {
	var out []string
	for _, c := range clusters {
		for _, ep := range r.XDS.Endpoints[c] {
			host, port, err := net.SplitHostPort(ep)
			if svc, ok := r.services[host]; ok && err == nil {
				ep = svc + ":" + port
			}
			out = append(out, ep)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// AssertGatewayAccepted fails the test unless the Gateway is accepted with
// every listener valid.
func AssertGatewayAccepted(t testing.TB, r *Result) {
	t.Helper()
	want := Condition{Type: typeAccepted, Status: metav1.ConditionTrue, Reason: reasonAccepted}
	if d := cmp.Diff(want, r.GatewayAccepted()); d != "" {
		t.Errorf("Gateway %s/%s is not accepted (-want +got):\n%s", r.Gateway.Namespace, r.Gateway.Name, d)
	}
}

// AssertListenersHealthy fails the test unless every listener is Accepted,
// Programmed and ResolvedRefs and none is Conflicted.
func AssertListenersHealthy(t testing.TB, r *Result) {
	t.Helper()
	for name, l := range r.Listeners() {
		var bad []Condition
		for _, c := range l.Conditions {
			healthy := c.Status == metav1.ConditionTrue
			if c.Type == "Conflicted" {
				healthy = c.Status != metav1.ConditionTrue
			}
			if !healthy {
				bad = append(bad, c)
			}
		}
		for _, typ := range []string{typeAccepted, "Programmed", "ResolvedRefs"} {
			if !slices.ContainsFunc(l.Conditions, func(c Condition) bool { return c.Type == typ }) {
				bad = append(bad, Condition{Type: typ, Status: "missing"})
			}
		}
		if len(bad) > 0 {
			t.Errorf("listener %s is not healthy: %+v", name, bad)
		}
	}
}

// AssertRouteParent fails the test unless the route's parent status for
// sectionName ("" for a parentRef without one) has exactly want.
func AssertRouteParent(t testing.TB, r *Result, kind, namespace, name, sectionName string, want []Condition) {
	t.Helper()
	parents, err := r.RouteParents(kind, namespace, name)
	if err != nil {
		t.Error(err)
		return
	}
	got, ok := parents[sectionName]
	if !ok {
		t.Errorf("%s %s/%s has no parent status for section %q of Gateway %s/%s; it has %v", kind, namespace, name, sectionName, r.Gateway.Namespace, r.Gateway.Name, parents)
		return
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s %s/%s, section %q (-want +got):\n%s", kind, namespace, name, sectionName, d)
	}
}
