package gateway

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// idleView is what an idle zone's place shows: the states of some child
// apexes and claims, and what the budgets spent.
type idleView struct {
	Children  map[string]v1alpha1.ChildApexState
	Hostnames map[string]string
	// Listeners on the Gateway, and names on the dns01 certificate.
	Listeners, Names int
}

func viewIdle(out *Output, apexes, claims []string) idleView {
	v := idleView{Children: map[string]v1alpha1.ChildApexState{}, Hostnames: map[string]string{}, Listeners: len(composedGateway(out).Spec.Listeners), Names: len(wildcardCertificateNames(out))}
	for _, c := range out.ChildApexes {
		for _, a := range apexes {
			if c.Apex == a {
				v.Children[a] = c.State
			}
		}
	}
	states := hostnameStates(out)
	for _, k := range claims {
		v.Hostnames[k] = states[k]
	}
	return v
}

// room is the number of child apexes a wildcard mode has places for: the
// dns01 certificate's name cap binds before the listener budget.
func room(spec v1alpha1.TenantGatewaySpec) int {
	if spec.CertMode == v1alpha1.CertModeDNS01 {
		return (maxCertificateDNSNames - 2) / 2
	}
	return budgetFull(spec)
}

// runsAlike composes in three times, each run fed the last one's output, and
// requires the same view from each: an idle zone's place does not flap.
func runsAlike(t *testing.T, in Input, apexes, claims []string) (Input, *Output) {
	t.Helper()
	out := attackP(t, &in)
	first := viewIdle(out, apexes, claims)
	for run := 2; run <= 3; run++ {
		next := fedBack(in, out)
		next.Routes = tableRoutes(t, &in, out)
		in = next
		out = attackP(t, &in)
		if diff := cmp.Diff(first, viewIdle(out, apexes, claims)); diff != "" {
			t.Errorf("run %d differs from the first (-first +run):\n%s", run, diff)
		}
	}
	return in, out
}

// TestIdleZonesTakeOnlyTheRoomRoutesLeave: an empty child zone gets its
// listener (and dns01 names) as the Cozystack controller gives them when
// there is room; it gives its place up to a route that needs it; a crowd of
// empty nested tenants takes no place a route needs, nor more than its
// branch's turns of the room left; and nothing flaps over runs.
func TestIdleZonesTakeOnlyTheRoomRoutesLeave(t *testing.T) {
	carolNS := labelled("tenant-carol", "carol.example.org")
	carol := routeTo("tenant-carol", "shop", "shop.carol.example.org")
	const shop = "shop.carol.example.org HTTPRoute/tenant-carol/shop"
	apexes := []string{"alice.example.org", "bob.example.org", "carol.example.org", "e00.alice.example.org"}
	type step struct {
		namespaces []Namespace
		routes     []Route
	}
	cases := map[string]struct {
		// free: top-level tenants with a route each fill the mode's room
		// but this many places (-1: no such tenants).
		free  int
		steps []step
		want  func(spec v1alpha1.TenantGatewaySpec) idleView
	}{
		"RoomForEmptyChildren": {
			free:  -1,
			steps: []step{{namespaces: platform(), routes: []Route{routeTo("tenant-root", "www", "www.example.org")}}},
			want: func(spec v1alpha1.TenantGatewaySpec) idleView {
				return idleView{
					Children:  map[string]v1alpha1.ChildApexState{"alice.example.org": v1alpha1.ChildApexListening, "bob.example.org": v1alpha1.ChildApexListening},
					Hostnames: map[string]string{shop: ""},
					// The fixed listeners and both children's.
					Listeners: budgetFullFixed(spec) + 2,
					Names:     dns01Only(spec, 2+2*2),
				}
			},
		},
		"EmptyChildGivesWayToARoute": {
			// One place free: alice's empty zone takes it (her branch's
			// turn comes before bob's), then carol's route needs it.
			free: 1,
			steps: []step{
				{namespaces: platform()},
				{namespaces: append(platform(), carolNS), routes: []Route{carol}},
			},
			want: func(spec v1alpha1.TenantGatewaySpec) idleView {
				return idleView{
					Children:  map[string]v1alpha1.ChildApexState{"alice.example.org": v1alpha1.ChildApexIdle, "bob.example.org": v1alpha1.ChildApexIdle, "carol.example.org": v1alpha1.ChildApexListening},
					Hostnames: map[string]string{shop: string(v1alpha1.HostnameCovered)},
					Listeners: budgetFullFixed(spec) + room(spec),
					Names:     dns01Only(spec, maxCertificateDNSNames),
				}
			},
		},
		"CrowdOfEmptyChildrenCannotCrowdOutARoute": {
			// alice's 70 empty nested tenants fill the room, bob's one
			// empty zone still gets his branch's turn; then carol's route
			// takes the place of one of alice's.
			free: -1,
			steps: []step{
				{namespaces: crowd(70)},
				{namespaces: append(crowd(70), carolNS), routes: []Route{carol}},
			},
			want: func(spec v1alpha1.TenantGatewaySpec) idleView {
				return idleView{
					Children:  map[string]v1alpha1.ChildApexState{"alice.example.org": v1alpha1.ChildApexListening, "bob.example.org": v1alpha1.ChildApexListening, "carol.example.org": v1alpha1.ChildApexListening, "e00.alice.example.org": v1alpha1.ChildApexListening},
					Hostnames: map[string]string{shop: string(v1alpha1.HostnameCovered)},
					Listeners: budgetFullFixed(spec) + room(spec),
					Names:     dns01Only(spec, maxCertificateDNSNames),
				}
			},
		},
		"CrowdAndRouteArriveTogether": {
			free:  -1,
			steps: []step{{namespaces: append(crowd(70), carolNS), routes: []Route{carol}}},
			want: func(spec v1alpha1.TenantGatewaySpec) idleView {
				return idleView{
					Children:  map[string]v1alpha1.ChildApexState{"alice.example.org": v1alpha1.ChildApexListening, "bob.example.org": v1alpha1.ChildApexListening, "carol.example.org": v1alpha1.ChildApexListening, "e00.alice.example.org": v1alpha1.ChildApexListening},
					Hostnames: map[string]string{shop: string(v1alpha1.HostnameCovered)},
					Listeners: budgetFullFixed(spec) + room(spec),
					Names:     dns01Only(spec, maxCertificateDNSNames),
				}
			},
		},
	}
	for name, tc := range cases {
		for mode, spec := range wildcardSpecs {
			t.Run(name+"/"+mode, func(t *testing.T) {
				var fnss []Namespace
				var froutes []Route
				if tc.free >= 0 {
					fnss, froutes = fillers(room(spec) - tc.free)
				}
				var in Input
				var out *Output
				for i, s := range tc.steps {
					next := Input{Spec: spec}
					if i > 0 {
						next = fedBack(in, out)
						next.Routes = nil
					}
					next.Namespaces = append(append([]Namespace{}, s.namespaces...), fnss...)
					next.Routes = append(append([]Route{}, s.routes...), froutes...)
					in, out = runsAlike(t, next, apexes, []string{shop})
				}
				got := viewIdle(out, apexes, []string{shop})
				if diff := cmp.Diff(tc.want(spec), got); diff != "" {
					t.Errorf("-want +got:\n%s", diff)
				}
			})
		}
	}
}

// budgetFullFixed is the number of fixed listeners of a wildcard mode.
func budgetFullFixed(spec v1alpha1.TenantGatewaySpec) int {
	return MaxListeners - budgetFull(spec)
}

// dns01Only is n in dns01 (names on its certificate), else 0.
func dns01Only(spec v1alpha1.TenantGatewaySpec, n int) int {
	if spec.CertMode == v1alpha1.CertModeDNS01 {
		return n
	}
	return 0
}

// TestIdleZonesSpendOnlyTheirBranchsOrders: alice creates an empty nested
// tenant every run, each a change of the dns01 certificate's names charged
// to her branch. Once her branch's orders are spent her new empty zones stay
// Idle (no route waits for them, so nothing is Waiting and ListenersReady
// says so), and bob's first route still gets his zone on the certificate.
func TestIdleZonesSpendOnlyTheirBranchsOrders(t *testing.T) {
	nss := platform()
	out := runs(t, Input{Spec: dns01Spec}, 13, func(i int, in *Input) {
		nss = append(nss, labelled(fmt.Sprintf("tenant-alice-n%02d", i), fmt.Sprintf("n%02d.alice.example.org", i)))
		in.Namespaces = nss
		if i == 12 {
			in.Routes = []Route{routeTo("tenant-bob", "shop", "shop.bob.example.org")}
		}
	})
	got := viewIdle(out, []string{"n00.alice.example.org", "n12.alice.example.org", "bob.example.org"}, nil).Children
	want := map[string]v1alpha1.ChildApexState{
		"n00.alice.example.org": v1alpha1.ChildApexListening,
		"n12.alice.example.org": v1alpha1.ChildApexIdle,
		"bob.example.org":       v1alpha1.ChildApexListening,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if c := condition(out, ConditionListenersReady); c.Reason == ReasonCertificateOrdersWaiting {
		t.Errorf("ListenersReady counts alice's empty zones as waiting: %s", c.Message)
	}
}

// TestIdleZoneGivesWayWithItsPins: alice routes names in the zone of her
// empty nested tenant z; z's listener takes them from alice's, so each needs
// a pin, and z listens, pins included, while there is room. When carol's
// route needs a place the listener and its pins give way together, served
// or not: carol is served, and so are alice's names, through her own
// listener again.
func TestIdleZoneGivesWayWithItsPins(t *testing.T) {
	alice := routeTo("tenant-alice", "names", hosts(5, "x%d.z.alice.example.org")...)
	const carolShop, aliceX0 = "shop.carol.example.org HTTPRoute/tenant-carol/shop", "x0.z.alice.example.org HTTPRoute/tenant-alice/names"
	claims := []string{carolShop, aliceX0}
	for mode, spec := range map[string]v1alpha1.TenantGatewaySpec{"ExistingSecret": existingSpec, "Edge": edgeSpec} {
		t.Run(mode, func(t *testing.T) {
			// alice's listener, bob's empty zone's, then z's and its
			// five pins.
			fnss, froutes := fillers(budgetFull(spec) - 8)
			nss := append(append(platform(), labelled("tenant-alice-z", "z.alice.example.org")), fnss...)
			in, out := runsAlike(t, Input{Spec: spec, Namespaces: nss, Routes: append(froutes, alice)}, []string{"z.alice.example.org"}, claims)
			want := idleView{
				Children:  map[string]v1alpha1.ChildApexState{"z.alice.example.org": v1alpha1.ChildApexListening},
				Hostnames: map[string]string{carolShop: "", aliceX0: string(v1alpha1.HostnameCovered)},
				Listeners: MaxListeners,
			}
			if diff := cmp.Diff(want, viewIdle(out, []string{"z.alice.example.org"}, claims)); diff != "" {
				t.Errorf("with room, -want +got:\n%s", diff)
			}
			next := fedBack(in, out)
			next.Namespaces = append(slices.Clone(nss), labelled("tenant-carol", "carol.example.org"))
			next.Routes = append(tableRoutes(t, &in, out), routeTo("tenant-carol", "shop", "shop.carol.example.org"))
			_, out = runsAlike(t, next, []string{"z.alice.example.org"}, claims)
			want.Children["z.alice.example.org"] = v1alpha1.ChildApexIdle
			want.Hostnames[carolShop] = string(v1alpha1.HostnameCovered)
			// carol's listener for z's and its five pins; bob's empty
			// zone, which sorts first among the served spares, stays.
			want.Listeners = MaxListeners - 5
			if diff := cmp.Diff(want, viewIdle(out, []string{"z.alice.example.org"}, claims)); diff != "" {
				t.Errorf("carol arrives, -want +got:\n%s", diff)
			}
		})
	}
}
