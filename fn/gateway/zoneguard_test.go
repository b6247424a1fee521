package gateway

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	kobjv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/object/v1alpha1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/tgwspec"
)

// composedRoutes are the HTTPRoutes the function writes through Objects
// (the zone guards), as the function reads them back from the cluster.
func composedRoutes(t *testing.T, out *Output) []Route {
	t.Helper()
	var routes []Route
	for _, res := range out.Resources {
		o, ok := res.Object.(*kobjv1alpha1.Object)
		if !ok || !isZoneGuardKey(res.Key) {
			continue
		}
		var r gwapiv1.HTTPRoute
		if err := json.Unmarshal(manifestBytes(t, o), &r); err != nil {
			t.Fatalf("cannot decode the manifest of Object %s: %v", o.Name, err)
		}
		if r.Kind != KindHTTPRoute {
			continue
		}
		routes = append(routes, routeOf(&r))
	}
	return routes
}

// routeOf is what the function reads of an HTTPRoute.
func routeOf(r *gwapiv1.HTTPRoute) Route {
	out := Route{Kind: KindHTTPRoute, Namespace: r.Namespace, Name: r.Name}
	for _, h := range r.Spec.Hostnames {
		out.Hostnames = append(out.Hostnames, string(h))
	}
	for _, p := range r.Spec.ParentRefs {
		ref := ParentRef{Name: string(p.Name)}
		if p.Group != nil {
			ref.Group, ref.CoreGroup = string(*p.Group), *p.Group == ""
		}
		if p.Kind != nil {
			ref.Kind = string(*p.Kind)
		}
		if p.Namespace != nil {
			ref.Namespace = string(*p.Namespace)
		}
		if p.SectionName != nil {
			ref.SectionName = string(*p.SectionName)
		}
		if p.Port != nil {
			ref.Port = *p.Port
		}
		out.ParentRefs = append(out.ParentRefs, ref)
	}
	return out
}

// tableRoutes are the routes an implementation's tables hold once the
// output is applied: the cluster's and the function's own.
func tableRoutes(t *testing.T, in *Input, out *Output) []Route {
	t.Helper()
	routes := slices.Clone(in.Routes)
	for _, r := range composedRoutes(t, out) {
		if !slices.ContainsFunc(routes, func(x Route) bool { return x.ID() == r.ID() }) {
			routes = append(routes, r)
		}
	}
	return routes
}

// TestZoneGuards: every child listener on the Gateway gets a guard in the
// child's namespace, attached to that listener only, listing *.<child apex>
// and matching only ZoneGuardPath; http01 (no child listeners) none.
func TestZoneGuards(t *testing.T) {
	routes := []Route{
		routeTo("tenant-alice", "www", "www.alice.example.org"),
		routeTo("tenant-alice-bob", "www", "www.bob.alice.example.org"),
	}
	for name, spec := range map[string]v1alpha1.TenantGatewaySpec{"Edge": edgeSpec, "DNS01": dns01Spec, "ExistingSecret": existingSpec, "HTTP01": http01Spec} {
		t.Run(name, func(t *testing.T) {
			in := Input{Spec: spec, Namespaces: nested(), Routes: routes}
			out := attackP(t, &in)
			var want []Route
			if tgwspec.Defaulted(spec).CertMode != v1alpha1.CertModeHTTP01 {
				for _, c := range []struct{ ns, apex string }{{"tenant-alice", "alice.example.org"}, {"tenant-alice-bob", "bob.alice.example.org"}} {
					want = append(want, Route{Kind: KindHTTPRoute, Namespace: c.ns, Name: "cozystack-zone-guard", Hostnames: []string{"*." + c.apex},
						ParentRefs: []ParentRef{{Group: gwapiv1.GroupName, Kind: "Gateway", Namespace: "tenant-root", Name: "cozystack", SectionName: childPrefix(spec.CertMode) + HostKey(c.apex)}}})
				}
			}
			got := composedRoutes(t, out)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("zone guards (-want +got):\n%s", diff)
			}
			for _, res := range out.Resources {
				o, ok := res.Object.(*kobjv1alpha1.Object)
				if !ok || !strings.HasPrefix(res.Key, keyZoneGuardPrefix) {
					continue
				}
				var r gwapiv1.HTTPRoute
				if err := json.Unmarshal(manifestBytes(t, o), &r); err != nil {
					t.Fatal(err)
				}
				wantRules := []gwapiv1.HTTPRouteRule{{Matches: []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{Type: ptr.To(gwapiv1.PathMatchExact), Value: ptr.To(ZoneGuardPath)}}}}}
				if diff := cmp.Diff(wantRules, r.Spec.Rules); diff != "" {
					t.Errorf("%s: rules (-want +got):\n%s", res.Key, diff)
				}
				if o.Namespace != "tenant-root" || o.Name != ZoneGuardObjectName("cozystack", r.Namespace) {
					t.Errorf("%s: Object %s/%s, want tenant-root/%s", res.Key, o.Namespace, o.Name, ZoneGuardObjectName("cozystack", r.Namespace))
				}
			}
		})
	}
}

// TestZoneGuardIsNoClaim: the guard read back claims nothing (a zone whose
// only route is its guard stays Idle, and status does not list it), while a
// route of the guard's name that differs from it in anything is a claim
// like any other, judged as one: a tenant cannot pass a route off as a
// guard to escape the judgement.
func TestZoneGuardIsNoClaim(t *testing.T) {
	guard := func(ns, host, section string) Route {
		r := routeTo(ns, "cozystack-zone-guard", host)
		r.ParentRefs[0].SectionName = section
		return r
	}
	bobListener := prefixEdgeChild + HostKey("bob.alice.example.org")
	for name, tc := range map[string]struct {
		route Route
		claim bool
	}{
		"Guard":           {route: guard("tenant-alice-bob", "*.bob.alice.example.org", bobListener)},
		"OtherHostname":   {route: guard("tenant-alice-bob", "*.x.bob.alice.example.org", bobListener), claim: true},
		"NoSection":       {route: guard("tenant-alice-bob", "*.bob.alice.example.org", ""), claim: true},
		"PinSection":      {route: guard("tenant-alice-bob", "*.bob.alice.example.org", prefixEdge+HostKey("a.bob.alice.example.org")), claim: true},
		"ParentsZone":     {route: guard("tenant-alice", "*.bob.alice.example.org", bobListener), claim: true},
		"OwnersNamespace": {route: guard("tenant-root", "*.bob.alice.example.org", bobListener), claim: true},
		"TwoParentRefs": {route: func() Route {
			r := guard("tenant-alice-bob", "*.bob.alice.example.org", bobListener)
			r.ParentRefs = append(r.ParentRefs, r.ParentRefs[0])
			return r
		}(), claim: true},
	} {
		t.Run(name, func(t *testing.T) {
			in := Input{Spec: edgeSpec, Namespaces: nested(), Routes: []Route{routeTo("tenant-alice", "www", "www.alice.example.org"), tc.route}}
			out := attackP(t, &in)
			claimed := slices.ContainsFunc(out.Hostnames, func(h v1alpha1.HostnameStatus) bool { return h.Route == tc.route.ID() })
			if claimed != tc.claim {
				t.Errorf("%s claims a hostname: %v, want %v (hostnames %v)", tc.route.ID(), claimed, tc.claim, hostnameStates(out))
			}
			if !tc.claim {
				for _, c := range out.ChildApexes {
					if c.Apex == "bob.alice.example.org" && c.State != v1alpha1.ChildApexIdle {
						t.Errorf("bob's zone, whose only route is its guard, is %s, want Idle", c.State)
					}
				}
			}
		})
	}
}

// TestZoneGuardMovesToAnAdmittedNamespace: bob's zone has two namespaces
// and the one whose route reaches into carol's zone is kept off his
// listener under a full budget (OwnReach):
// the guard goes to his other namespace, which the listener still admits,
// so no name of bob's zone falls through to alice's wildcard.
func TestZoneGuardMovesToAnAdmittedNamespace(t *testing.T) {
	fnss, froutes := fillers(budgetFull(edgeSpec) - 3)
	nss := append(deep(), labelled("tenant-alice-bob-apps", "bob.alice.example.org"))
	in := Input{Spec: edgeSpec, Namespaces: append(nss, fnss...), Routes: append(froutes,
		routeTo("tenant-alice", "all", "*.alice.example.org"),
		routeTo("tenant-alice-bob", "www", "www.bob.alice.example.org"),
		routeTo("tenant-alice-bob-carol", "www", "www.carol.bob.alice.example.org"))}
	out := attackP(t, &in)
	next := fedBack(in, out)
	next.Routes = append(tableRoutes(t, &in, out), routeTo("tenant-alice-bob", "reach", "*.x.carol.bob.alice.example.org"))
	in = next
	out = attackP(t, &in)
	var guardNS []string
	for _, r := range composedRoutes(t, out) {
		if r.Hostnames[0] == "*.bob.alice.example.org" {
			guardNS = append(guardNS, r.Namespace)
		}
	}
	if diff := cmp.Diff([]string{"tenant-alice-bob-apps"}, guardNS); diff != "" {
		t.Errorf("namespaces of bob's zone guard (-want +got):\n%s", diff)
	}
	if l, rs := answer(t, &in, out, 80, "login.bob.alice.example.org"); len(rs) > 0 {
		t.Errorf("login.bob.alice.example.org, in bob's zone, is answered by %v on listener %s", rs, l)
	}
}

// TestAttackZoneGuardKeyCollision: alice names a nested tenant so that its
// apex derives the same 32-bit short key as bob's nested tenant's
// (harbor.x19ul5zj.alice.example.org and harbor.bob.example.org, both
// harbor-3005190e: a birthday search of minutes), to take the composition
// resource name of bob's zone guard: bob's zone loses its guard, or alice's
// guard is written through the Object Crossplane holds for bob's. What
// must hold: every guard has a key of its own, each key holds the Object of
// its own zone's namespace, and a guard Crossplane already observes keeps
// its key whoever came first.
func TestAttackZoneGuardKeyCollision(t *testing.T) {
	const bob, alice = "harbor.bob.example.org", "harbor.x19ul5zj.alice.example.org"
	if ZoneGuardKey(bob) != ZoneGuardKey(alice) {
		t.Fatalf("the pair no longer collides: %s, %s", ZoneGuardKey(bob), ZoneGuardKey(alice))
	}
	nss := append(platform(), labelled("tenant-bob-harbor", bob), labelled("tenant-alice-x19ul5zj", alice))
	routes := []Route{
		routeTo("tenant-bob-harbor", "www", "www."+bob),
		routeTo("tenant-alice-x19ul5zj", "www", "www."+alice),
	}
	bobObject, aliceObject := ZoneGuardObjectName("cozystack", "tenant-bob-harbor"), ZoneGuardObjectName("cozystack", "tenant-alice-x19ul5zj")
	cases := map[string]struct {
		observed map[string]*kube.ObservedResource
		want     map[string]string // key → the guard Object's name
	}{
		"Fresh": {
			want: map[string]string{ZoneGuardKey(bob): bobObject, fullZoneGuardKey(alice): aliceObject},
		},
		"AliceObservedUnderTheShortKey": {
			observed: map[string]*kube.ObservedResource{ZoneGuardKey(alice): {Name: aliceObject}},
			want:     map[string]string{ZoneGuardKey(alice): aliceObject, fullZoneGuardKey(bob): bobObject},
		},
		"BobObservedUnderTheFullKey": {
			observed: map[string]*kube.ObservedResource{fullZoneGuardKey(bob): {Name: bobObject}},
			want:     map[string]string{ZoneGuardKey(alice): aliceObject, fullZoneGuardKey(bob): bobObject},
		},
	}
	for name, tc := range cases {
		for mode, spec := range wildcardSpecs {
			t.Run(name+"/"+mode, func(t *testing.T) {
				out := attack(t, Input{Spec: spec, Namespaces: nss, Routes: routes, Observed: tc.observed})
				got := map[string]string{}
				for _, r := range out.Resources {
					if o, ok := r.Object.(*kobjv1alpha1.Object); ok && isZoneGuardKey(r.Key) {
						if _, dup := got[r.Key]; dup {
							t.Errorf("two guards under key %s", r.Key)
						}
						got[r.Key] = o.Name
					}
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("zone guards by key, -want +got:\n%s", diff)
				}
			})
		}
	}
}

// TestAttackParentWildcardOnAChildApex: a parent routes a wildcard (or a
// route without hostnames) over its zone, to answer a nested tenant's bare
// apex: a child's listener is *.<child>, which does not match the apex
// itself, so the parent's wider listener takes it by SNI, and in a shared
// table *.<parent> is its longest wildcard suffix. What must hold: no
// route of the parent's answers the child's apex, on any table the Gateway
// has (per SNI and shared); the child's own route on its apex is served.
func TestAttackParentWildcardOnAChildApex(t *testing.T) {
	hostless := Route{Kind: KindHTTPRoute, Namespace: "tenant-root", Name: "all", ParentRefs: []ParentRef{{Name: "cozystack"}}}
	cases := map[string]struct {
		routes  []Route
		request string
		want    []string // the routes that may answer it
	}{
		"AliceWildcardOnBob": {
			routes:  []Route{routeTo("tenant-alice", "all", "*.alice.example.org"), routeTo("tenant-alice-bob", "www", "www.bob.alice.example.org")},
			request: "bob.alice.example.org",
		},
		"RootWildcardOnAlice": {
			routes:  []Route{routeTo("tenant-root", "all", "*.example.org"), routeTo("tenant-alice", "www", "www.alice.example.org")},
			request: "alice.example.org",
		},
		"RootWithoutHostnamesOnBob": {
			routes:  []Route{hostless, routeTo("tenant-alice-bob", "www", "www.bob.alice.example.org")},
			request: "bob.alice.example.org",
		},
		"BobRoutesHisApex": {
			routes:  []Route{routeTo("tenant-alice", "all", "*.alice.example.org"), routeTo("tenant-alice-bob", "apex", "bob.alice.example.org")},
			request: "bob.alice.example.org",
			want:    []string{"HTTPRoute/tenant-alice-bob/apex"},
		},
	}
	for name, tc := range cases {
		for mode, spec := range wildcardSpecs {
			t.Run(name+"/"+mode, func(t *testing.T) {
				in := Input{Spec: spec, Namespaces: nested(), Routes: tc.routes}
				first := attackP(t, &in)
				in = fedBack(in, first)
				in.Routes = tableRoutes(t, &in, first)
				out := attackP(t, &in)
				port := gwapiv1.PortNumber(443)
				if spec.CertMode == v1alpha1.CertModeEdge {
					port = 80
				}
				for _, shared := range []bool{false, true} {
					l, rs := answerIn(t, &in, out, port, tc.request, shared)
					if diff := cmp.Diff(tc.want, rs, cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("shared=%v: %s on listener %q, answering routes -want +got:\n%s", shared, tc.request, l, diff)
					}
				}
			})
		}
	}
}
