package gateway

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/conditions"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// naming is routeTo whose parentRef names a listener and a port.
func naming(section string, port int32, ns, name string, hosts ...string) Route {
	r := routeTo(ns, name, hosts...)
	r.ParentRefs[0].SectionName, r.ParentRefs[0].Port = section, port
	return r
}

// checkSelection: every listener named after a hostname (an http01 listener
// or a pin) is there for a claim that is not NoMatchingParent, or for one the
// listener took from the listener its route names (see Listener selection
// in docs/design.md), or for the zone guard of a listening child's bare
// apex; no Certificate names a hostname only such claims ask for.
func checkSelection(t *testing.T, out *Output) {
	t.Helper()
	gw := composedGateway(out)
	if gw == nil || strings.Contains(condition(out, conditions.RoutesAccepted).Message, "status.hostnames lists") {
		return // status.hostnames was cut short
	}
	zones := map[string]bool{}
	for _, c := range out.ChildApexes {
		zones[c.Apex] = c.State == v1alpha1.ChildApexListening
	}
	for _, l := range gw.Spec.Listeners {
		n := string(l.Name)
		if zones[hostOf(l)] || n == ListenerHTTPSApex || n == ListenerEdgeApex || !strings.HasPrefix(n, prefixHTTPS) && !strings.HasPrefix(n, prefixEdge) || strings.HasPrefix(n, prefixChild) || strings.HasPrefix(n, prefixEdgeChild) {
			continue
		}
		ok := false
		for _, h := range out.Hostnames {
			if h.Hostname == hostOf(l) && (h.State != v1alpha1.HostnameNoMatchingParent || strings.Contains(h.Message, "is taken by listener "+n+" ")) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("listener %s (%s) composed, but no claim of %s can attach to it", n, hostOf(l), hostOf(l))
		}
	}
}

// TestListenerSelection: a parentRef's sectionName and port restrict the
// listeners the route attaches to, as the Gateway API says; a hostname no
// attachable route claims gets nothing.
func TestListenerSelection(t *testing.T) {
	edge := v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeEdge, AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-dashboard"}}
	cases := map[string]struct {
		spec   v1alpha1.TenantGatewaySpec
		routes []Route
		want   map[string]string
	}{
		"http01 has no https listener": {
			spec:   http01Spec,
			routes: []Route{naming(ListenerHTTPS, 0, "cozy-dashboard", "dashboard", "dashboard.example.org")},
			want:   map[string]string{"dashboard.example.org HTTPRoute/cozy-dashboard/dashboard": "NoMatchingParent"},
		},
		"http01 listener named": {
			spec:   http01Spec,
			routes: []Route{naming(HostListenerName("dashboard.example.org"), 443, "cozy-dashboard", "dashboard", "dashboard.example.org")},
			want:   map[string]string{"dashboard.example.org HTTPRoute/cozy-dashboard/dashboard": "Listening"},
		},
		"dns01 wildcard named": {
			spec:   dns01Spec,
			routes: []Route{naming(ListenerHTTPS, 0, "cozy-dashboard", "dashboard", "dashboard.example.org", "example.org")},
			want: map[string]string{
				"dashboard.example.org HTTPRoute/cozy-dashboard/dashboard": "Covered",
				"example.org HTTPRoute/cozy-dashboard/dashboard":           "NoMatchingParent",
			},
		},
		"child apex listener takes the name, not https": {
			spec:   dns01Spec,
			routes: []Route{naming(ListenerHTTPS, 0, "tenant-alice", "app", "app.alice.example.org"), naming(prefixChild+HostKey("alice.example.org"), 0, "tenant-alice", "ok", "ok.alice.example.org")},
			want: map[string]string{
				"app.alice.example.org HTTPRoute/tenant-alice/app": "NoMatchingParent",
				"ok.alice.example.org HTTPRoute/tenant-alice/ok":   "Covered",
			},
		},
		"port 80 on an HTTPS Gateway": {
			spec:   dns01Spec,
			routes: []Route{naming("", 80, "tenant-root", "www", "www.example.org"), naming("", 443, "tenant-root", "api", "api.example.org")},
			want: map[string]string{
				"www.example.org HTTPRoute/tenant-root/www": "NoMatchingParent",
				"api.example.org HTTPRoute/tenant-root/api": "Covered",
			},
		},
		"edge serves on port 80": {
			spec:   edge,
			routes: []Route{naming(ListenerEdge, 80, "tenant-root", "www", "www.example.org"), naming("", 443, "tenant-root", "api", "api.example.org")},
			want: map[string]string{
				"www.example.org HTTPRoute/tenant-root/www": "Covered",
				"api.example.org HTTPRoute/tenant-root/api": "NoMatchingParent",
			},
		},
		"the owner names http": {
			spec:   http01Spec,
			routes: []Route{naming(ListenerHTTP, 0, "tenant-root", "plain", "plain.example.org")},
			want:   map[string]string{"plain.example.org HTTPRoute/tenant-root/plain": "NoMatchingParent"},
		},
		"one parentRef of two selects": {
			spec: http01Spec,
			routes: []Route{func() Route {
				r := naming(ListenerHTTPS, 0, "tenant-root", "www", "www.example.org")
				r.ParentRefs = append(r.ParentRefs, ParentRef{Name: "cozystack", SectionName: HostListenerName("www.example.org")})
				return r
			}()},
			want: map[string]string{"www.example.org HTTPRoute/tenant-root/www": "Listening"},
		},
		"a port no listener has, and duplicated parentRefs": {
			spec: dns01Spec,
			routes: func() []Route {
				odd := naming("", 8443, "tenant-alice", "odd", "odd.alice.example.org")
				twice := naming(ListenerHTTPS, 0, "tenant-root", "twice", "twice.example.org")
				twice.ParentRefs = append(twice.ParentRefs, twice.ParentRefs[0])
				return []Route{odd, twice}
			}(),
			want: map[string]string{
				"odd.alice.example.org HTTPRoute/tenant-alice/odd": "NoMatchingParent",
				"twice.example.org HTTPRoute/tenant-root/twice":    "Covered",
			},
		},
		"passthrough listener named": {
			spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", TLSPassthroughServices: []v1alpha1.DNSLabel{"api", "db"}},
			routes: func() []Route {
				ok, wrong := naming(PassthroughListenerName("api"), 443, "tenant-root", "api", "api.example.org"), naming(PassthroughListenerName("api"), 0, "tenant-root", "db", "db.example.org")
				ok.Kind, wrong.Kind = KindTLSRoute, KindTLSRoute
				return []Route{ok, wrong}
			}(),
			want: map[string]string{
				"api.example.org TLSRoute/tenant-root/api": "Passthrough",
				"db.example.org TLSRoute/tenant-root/db":   "NoMatchingParent",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := Input{Spec: tc.spec, Namespaces: platform(), Routes: tc.routes}
			out := attackP(t, &in)
			checkSelection(t, out)
			if diff := cmp.Diff(tc.want, hostnameStates(out)); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
			c := condition(out, conditions.RoutesAccepted)
			nomatch := strings.Contains(strings.Join(slices.Collect(maps.Values(tc.want)), " "), "NoMatchingParent")
			if nomatch != (c.Reason == conditions.ReasonNoMatchingParent) {
				t.Errorf("RoutesAccepted %s (%s); want NoMatchingParent exactly when a claim is", c.Reason, c.Message)
			}
		})
	}
}

// TestListenerSelectionComposesNothing: a hostname claimed only by routes
// whose parentRefs select no listener that can take it gets no listener and
// no Certificate, and its message names what the route selects.
func TestListenerSelectionComposesNothing(t *testing.T) {
	in := Input{Spec: http01Spec, Namespaces: platform(), Routes: []Route{
		naming(ListenerHTTPS, 0, "cozy-dashboard", "dashboard", "dashboard.example.org"),
		routeTo("tenant-root", "www", "www.example.org"),
	}}
	out := attackP(t, &in)
	v := viewOf(t, out)
	want := []string{"gateway", "issuer", "certificate-" + HostListenerName("www.example.org"), "redirect", "report-cozy-dashboard"}
	if diff := cmp.Diff(want, v.Keys); diff != "" {
		t.Errorf("composed resources: -want, +got:\n%s", diff)
	}
	for _, h := range out.Hostnames {
		if h.Hostname == "dashboard.example.org" && !strings.Contains(h.Message, "sectionName https") {
			t.Errorf("message does not name the sectionName: %s", h.Message)
		}
	}
}

// TestAttackListenerSelection plays a tenant that names listeners and
// ports: the names are the function's, so the tenant can only name a
// listener of a hostname, an apex or a child apex, and naming one grants
// nothing the listener's allowedRoutes refuse. A sectionName can only make
// a claim count less, as deleting the route would.
func TestAttackListenerSelection(t *testing.T) {
	alice := HostListenerName("harbor.alice.example.org")
	t.Run("AnotherTenantsListener", func(t *testing.T) {
		// bob names alice's listener, for alice's hostname and his own,
		// and with a hostname-less route.
		for _, spec := range []v1alpha1.TenantGatewaySpec{http01Spec, dns01Spec} {
			in := Input{Spec: spec, Namespaces: platform(), Routes: []Route{
				routeTo("tenant-alice", "harbor", "harbor.alice.example.org"),
				naming(alice, 0, "tenant-bob", "grab", "harbor.alice.example.org", "www.bob.example.org"),
				naming(alice, 0, "tenant-bob", "any"),
				naming(prefixChild+HostKey("alice.example.org"), 0, "tenant-bob", "child"),
			}}
			out := attackP(t, &in)
			checkSelection(t, out)
			want := map[string]string{
				"harbor.alice.example.org HTTPRoute/tenant-alice/harbor": map[bool]string{true: "Covered", false: "Listening"}[spec.CertMode == v1alpha1.CertModeDNS01],
				"harbor.alice.example.org HTTPRoute/tenant-bob/grab":     "NotDelegated",
				"www.bob.example.org HTTPRoute/tenant-bob/grab":          "NoMatchingParent",
			}
			if diff := cmp.Diff(want, hostnameStates(out)); diff != "" {
				t.Errorf("%s: -want, +got:\n%s", spec.CertMode, diff)
			}
			for _, r := range out.HostnamelessRoutes {
				if len(r.Listeners) != 0 {
					t.Errorf("%s: %s reaches %v", spec.CertMode, r.Route, r.Listeners)
				}
			}
			for _, l := range listenerNames(out) {
				if strings.Contains(l, "www.bob") {
					t.Errorf("%s: listener %s composed for bob's unattachable claim", spec.CertMode, l)
				}
			}
		}
	})
	t.Run("ConflictWinner", func(t *testing.T) {
		// cozy-dashboard wins x.example.org from tenant-root (cozy-*
		// first). The owner naming listeners changes nothing; the winner
		// naming none that can take it counts as if its route were gone.
		for _, spec := range []v1alpha1.TenantGatewaySpec{http01Spec, dns01Spec} {
			for _, section := range []string{ListenerHTTPS, ListenerHTTPSApex, HostListenerName("x.example.org"), ""} {
				out := attack(t, Input{Spec: spec, Namespaces: platform(), Routes: []Route{
					routeTo("cozy-dashboard", "x", "x.example.org"),
					naming(section, 0, "tenant-root", "x", "x.example.org"),
				}})
				checkSelection(t, out)
				if got := hostnameStates(out)["x.example.org HTTPRoute/cozy-dashboard/x"]; !isServed(v1alpha1.HostnameState(got)) {
					t.Errorf("%s, owner names %q: the winner is %s", spec.CertMode, section, got)
				}
			}
			withWrong := attack(t, Input{Spec: spec, Namespaces: platform(), Routes: []Route{
				naming("http", 0, "cozy-dashboard", "x", "x.example.org"),
				routeTo("tenant-root", "x", "x.example.org"),
			}})
			without := attack(t, Input{Spec: spec, Namespaces: platform(), Routes: []Route{routeTo("tenant-root", "x", "x.example.org")}})
			if diff := cmp.Diff(listenerNames(without), listenerNames(withWrong)); diff != "" {
				t.Errorf("%s: an unattachable winner's route changed the listeners: -without, +with:\n%s", spec.CertMode, diff)
			}
			if got := hostnameStates(withWrong)["x.example.org HTTPRoute/tenant-root/x"]; !isServed(v1alpha1.HostnameState(got)) {
				t.Errorf("%s: tenant-root's claim is %s, want served (nobody else can attach)", spec.CertMode, got)
			}
		}
	})
	t.Run("WinnerNamesTheWildcardOfAPinnedName", func(t *testing.T) {
		// cozy-dashboard wins x.example.org but its route names https;
		// the pin that enforces the conflict takes the name, so neither
		// route is served, and status says so.
		in := Input{Spec: dns01Spec, Namespaces: platform(), Routes: []Route{
			naming(ListenerHTTPS, 0, "cozy-dashboard", "x", "x.example.org"),
			routeTo("tenant-root", "x", "x.example.org"),
		}}
		out := attackP(t, &in)
		checkSelection(t, out)
		want := map[string]string{"x.example.org HTTPRoute/cozy-dashboard/x": "NoMatchingParent", "x.example.org HTTPRoute/tenant-root/x": "Conflict"}
		if diff := cmp.Diff(want, hostnameStates(out)); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
		if _, rs := answer(t, &in, out, 443, "x.example.org"); len(rs) != 0 {
			t.Errorf("x.example.org answered by %v", rs)
		}
	})
	t.Run("NamesForHostnamesNotOwned", func(t *testing.T) {
		// alice names the listener bob's hostname would get, and a child
		// apex's of a namespace she does not own: no listener for them.
		out := attack(t, Input{Spec: dns01Spec, Namespaces: platform(), Routes: []Route{
			naming(HostListenerName("shop.bob.example.org"), 0, "tenant-alice", "a", "shop.bob.example.org"),
			naming(prefixChild+HostKey("bob.example.org"), 0, "tenant-alice", "b", "x.bob.example.org"),
		}})
		checkSelection(t, out)
		for k, s := range hostnameStates(out) {
			if s != "NotDelegated" {
				t.Errorf("%s is %s, want NotDelegated", k, s)
			}
		}
		for _, l := range listenerNames(out) {
			if strings.Contains(l, "shop") || strings.Contains(l, " x.bob") {
				t.Errorf("listener %s composed", l)
			}
		}
	})
	t.Run("AnotherTenantsListenerNames", func(t *testing.T) {
		// bob's served name keeps its listener whatever alice's colliding
		// route names (the pair shares https-harbor-3005190e).
		served := &kube.ObservedResource{ListenerNames: []string{"http", "https-harbor-3005190e"}, ListenerHostnames: map[string]string{"http": "", "https-harbor-3005190e": "harbor.bob.example.org"}}
		for _, section := range []string{"", "https-harbor-3005190e", "https-harbor-3005190ef4187f1a", ListenerHTTPS} {
			out := attack(t, Input{Spec: http01Spec, Namespaces: platform(), Observed: map[string]*kube.ObservedResource{KeyGateway: served}, Routes: []Route{
				routeTo("tenant-bob", "harbor", "harbor.bob.example.org"),
				naming(section, 0, "tenant-alice", "x", "harbor.x19ul5zj.alice.example.org"),
			}})
			checkSelection(t, out)
			if got := listenerNames(out)[1]; got != "https-harbor-3005190e harbor.bob.example.org" {
				t.Errorf("alice names %q: bob's listener is %s", section, got)
			}
		}
	})
}

// TestAttackContestMovesTheListener plays an ancestor (tenant-root, which
// loses every name of alice's zone to her) that adds and removes a losing
// claim on alice's name: the pin that keeps it out comes and goes, so which
// listener takes the name moves, and a route of alice's that names one
// listener is served in only one of the two worlds. Nothing the ancestor
// does can be served, and a parentRef without sectionName (or naming only
// port 443) follows the listener, so it is served in both; the status of a
// route naming a listener says so (see Listener selection in
// docs/design.md).
func TestAttackContestMovesTheListener(t *testing.T) {
	const h = "app.alice.example.org"
	child, pin := prefixChild+HostKey("alice.example.org"), HostListenerName(h)
	cases := map[string]struct {
		section string
		port    int32
		// want is alice's state without and with tenant-root's claim.
		want [2]string
	}{
		"no sectionName": {want: [2]string{"Covered", "Covered"}},
		"port 443":       {port: 443, want: [2]string{"Covered", "Covered"}},
		"child listener": {section: child, want: [2]string{"Covered", "NoMatchingParent"}},
		"pin":            {section: pin, want: [2]string{"NoMatchingParent", "Covered"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for i, contested := range []bool{false, true} {
				routes := []Route{naming(tc.section, tc.port, "tenant-alice", "app", h)}
				if contested {
					routes = append(routes, routeTo("tenant-root", "grab", h))
				}
				in := Input{Spec: dns01Spec, Namespaces: platform(), Routes: routes}
				out := attackP(t, &in)
				var got claimView
				for _, s := range out.Hostnames {
					if s.Route == "HTTPRoute/tenant-alice/app" {
						got = claimView{State: string(s.State), Message: s.Message}
					}
				}
				if got.State != tc.want[i] {
					t.Errorf("contested %v: alice's claim is %s, want %s (%s)", contested, got.State, tc.want[i], got.Message)
				}
				if got.State == "NoMatchingParent" && !strings.Contains(got.Message, "a contest for the name adds or removes its pin") {
					t.Errorf("contested %v: the message does not say why naming a listener is fragile: %s", contested, got.Message)
				}
				_, rs := answer(t, &in, out, 443, h)
				if served := isServed(v1alpha1.HostnameState(got.State)); served != (len(rs) == 1 && rs[0] == "HTTPRoute/tenant-alice/app") {
					t.Errorf("contested %v: %s answered by %v", contested, h, rs)
				}
			}
		})
	}
}

// claimView is the state and message of one claim in status.
type claimView struct{ State, Message string }
