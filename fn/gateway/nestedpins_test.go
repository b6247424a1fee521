package gateway

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// Attacks on nested pins (a name of a contest's winner under its own
// wildcard pin), edge mode, passthrough, deep nesting, full budgets and
// names at their length limits, written as the tenant that tries them.

// chainRoutes are a contest of *.apps.example.org between the owner and a
// publisher (the publisher wins: a cozy-* namespace beats the owner at equal
// delegation), and under the publisher's wildcard pin a wildcard of its own
// and a name under that: three pins nested in one another, *.apps,
// *.b.apps and c.b.apps. The owner also serves www.example.org, which
// nobody contests.
func chainRoutes() []Route {
	return []Route{
		routeTo("tenant-root", "apps", "*.apps.example.org"),
		routeTo("tenant-root", "www", "www.example.org"),
		routeTo("cozy-dashboard", "apps", "*.apps.example.org"),
		routeTo("cozy-dashboard", "b", "*.b.apps.example.org"),
		routeTo("cozy-dashboard", "c", "c.b.apps.example.org"),
	}
}

// TestAttackChainedPinsHalfKept: with
// two places free the budget keeps
// *.apps and *.b.apps and leaves out c.b.apps. keepNestedWhole walks the
// pins from the most specific up by counting dots, but *.b.apps and
// c.b.apps have as many: *.b.apps is visited first (kept, nothing to do),
// then c.b.apps drops it, and *.apps, visited last, stays kept although
// the pin that needed it whole is gone. The publisher's *.b.apps and
// c.b.apps then attach to the *.apps pin and to edge / https (*.example.org)
// alike: edge's port-80 table (and Cilium's shared HTTPS table) lists each
// twice, and Envoy refuses the table whole: no route of any tenant on port
// 80 updates any more, while every status says Covered. The same happens
// with names at their length limits (a 253-character name under a wildcard
// as long), and when c.b.apps is added under a full budget to pins already
// served (a served *.b.apps pin is taken away).
func TestAttackChainedPinsHalfKept(t *testing.T) {
	for name, spec := range wildcardSpecs {
		t.Run(name+"/fresh", func(t *testing.T) {
			fnss, froutes := fillers(budgetFull(spec) - 2)
			twice(t, Input{Spec: spec, Namespaces: append(platform(), fnss...), Routes: append(froutes, chainRoutes()...)})
		})
		t.Run(name+"/at-the-length-limits", func(t *testing.T) {
			// The same chain with a 253-character name and the wildcard
			// above it (same depth, so the same walk).
			long, wide := longUnderApps()
			fnss, froutes := fillers(budgetFull(spec) - 2)
			twice(t, Input{Spec: spec, Namespaces: append(platform(), fnss...), Routes: append(froutes,
				routeTo("tenant-root", "apps", "*.apps.example.org"),
				routeTo("cozy-dashboard", "apps", "*.apps.example.org"),
				routeTo("cozy-dashboard", "long", long),
				routeTo("cozy-dashboard", "wide", wide),
			)})
		})
		t.Run(name+"/served", func(t *testing.T) {
			fnss, froutes := fillers(budgetFull(spec) - 2)
			routes := chainRoutes()
			in := Input{Spec: spec, Namespaces: append(platform(), fnss...), Routes: append(froutes, routes[:4]...)}
			first := attackP(t, &in)
			next := fedBack(in, first)
			next.Routes = append(next.Routes, routes[4])
			out := attackP(t, &next)
			again := fedBack(next, out)
			attackP(t, &again)
		})
	}
}

// TestAttackNameUnderServedPinTakesTheOwnerOff: the owner and a publisher
// contest *.apps.example.org; the publisher's wildcard pin is served and
// takes the budget's last place. The publisher then routes a.apps under its
// pin: the name needs a pin of its own (nestedAdmits), which does not fit,
// so keepNestedWhole takes the served wildcard pin away, and isolate,
// seeing the winner admitted on the kept https / edge, keeps the owner off
// that listener as a whole: www.example.org, which nobody contests, goes
// OverListenerLimit and dark ("namespace tenant-root is kept off listener
// https"); a pin that stayed would list the name twice.
// The second case is the same without nesting: a publisher claims one name
// the owner serves under a full budget.
func TestAttackNameUnderServedPinTakesTheOwnerOff(t *testing.T) {
	for name, spec := range map[string]v1alpha1.TenantGatewaySpec{"Edge": edgeSpec, "ExistingSecret": existingSpec} {
		for _, c := range []struct {
			name   string
			before []Route
			attack Route
		}{
			{"nested", []Route{routeTo("tenant-root", "apps", "*.apps.example.org"), routeTo("cozy-dashboard", "apps", "*.apps.example.org")}, routeTo("cozy-dashboard", "a", "a.apps.example.org")},
			{"exact", []Route{routeTo("tenant-root", "shop", "shop.example.org")}, routeTo("cozy-dashboard", "shop", "shop.example.org")},
		} {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				free := 1
				if c.name == "exact" {
					free = 0
				}
				fnss, froutes := fillers(budgetFull(spec) - free)
				in := Input{Spec: spec, Namespaces: append(platform(), fnss...), Routes: append(append(froutes, routeTo("tenant-root", "www", "www.example.org")), c.before...)}
				first := attackP(t, &in)
				key := "www.example.org HTTPRoute/tenant-root/www"
				if s := hostnameStates(first)[key]; !isServed(v1alpha1.HostnameState(s)) {
					t.Fatalf("before the attack %s is %s", key, s)
				}
				next := fedBack(in, first)
				next.Routes = append(next.Routes, c.attack)
				out := attackP(t, &next)
				for _, h := range out.Hostnames {
					if h.Hostname+" "+h.Route == key && !isServed(h.State) {
						t.Errorf("%s routed %s: the owner's uncontested %s is %s (%s)", c.attack.ID(), c.attack.Hostnames[0], key, h.State, h.Message)
					}
				}
			})
		}
	}
}

// spentFullCertificate is alice's branch after eleven runs, an hour apart:
// the owner's first certificate, then alice's 39 nested tenants with a
// route each in one change, then one more per run: 48 nested tenants and
// alice make 49 child apexes, the certificate's 100 names, and alice's
// branch has spent its 10 orders of the week. It returns the namespaces,
// the routes and the last run's output.
func spentFullCertificate(t *testing.T) ([]Namespace, []Route, *Output) {
	t.Helper()
	nss := platform()
	routes := []Route{routeTo("tenant-alice", "www", "www.alice.example.org")}
	zones := func(from, to int) {
		for i := from; i < to; i++ {
			ns := fmt.Sprintf("tenant-alice-n%02d", i)
			nss = append(nss, labelled(ns, fmt.Sprintf("n%02d.alice.example.org", i)))
			routes = append(routes, routeTo(ns, "r", fmt.Sprintf("www.n%02d.alice.example.org", i)))
		}
	}
	out := runs(t, Input{Spec: dns01Spec}, 11, func(i int, in *Input) {
		switch i {
		case 0:
		case 1:
			zones(0, 39)
		default:
			zones(37+i, 38+i)
		}
		in.Namespaces, in.Routes = nss, routes
	})
	return nss, routes, out
}

// wildcardCertificateNames are the dnsNames of the composed dns01
// certificate.
func wildcardCertificateNames(out *Output) []string {
	for _, r := range out.Resources {
		if c, ok := r.Object.(*cmv1.Certificate); ok && r.Key == KeyCertificateWildcard {
			return c.Spec.DNSNames
		}
	}
	return nil
}

// TestAttackSpentBranchOverfillsTheCertificate: alice fills the dns01
// certificate with her nested tenants and spends her branch's orders (a
// week's 10), then empties them (each zone goes Idle) or deletes them. A
// new tenant, carol, routes a name. capCertificateNames gives carol the
// place of an idle zone of alice's, but holdDNS01, run after it, puts
// every zone of alice's back (her branch may not order their removal), and
// keeps a deleted zone's names on top of the cap: the certificate asks for
// 102 names. The ACME CA refuses an order of more than 100 (Let's Encrypt:
// "too many identifiers"), so the one wildcard certificate every tenant of
// the apex serves is never issued again: carol's zone is never covered,
// and at its renewal every tenant's HTTPS goes with it. Status says
// carol's zone is Listening and her name Covered.
func TestAttackSpentBranchOverfillsTheCertificate(t *testing.T) {
	for _, c := range []string{"emptied", "deleted"} {
		t.Run(c, func(t *testing.T) {
			nss, routes, out := spentFullCertificate(t)
			if n := len(wildcardCertificateNames(out)); n != maxCertificateDNSNames {
				t.Fatalf("alice's zones fill %d names, want %d", n, maxCertificateDNSNames)
			}
			in := fedBack(Input{Spec: dns01Spec, Namespaces: nss, Routes: routes, Now: t0.Add(12 * time.Hour)}, out)
			if c == "deleted" {
				// Her last two nested tenants are gone.
				in.Namespaces, in.Routes = nss[:len(nss)-2], routes[:len(routes)-2]
			} else {
				in.Routes = routes[:1]
			}
			in.Namespaces = append(in.Namespaces, labelled("tenant-carol", "carol.example.org"))
			in.Routes = append(in.Routes, routeTo("tenant-carol", "shop", "shop.carol.example.org"))
			out = settled(t, &in)
			again := fedBack(in, out)
			again.Now = in.Now.Add(time.Hour)
			out = settled(t, &again)
			if n := len(wildcardCertificateNames(out)); n > maxCertificateDNSNames {
				t.Errorf("the dns01 certificate asks for %d names; the ACME CA issues at most %d (carol's shop.carol.example.org is %s)", n, maxCertificateDNSNames, hostnameStates(out)["shop.carol.example.org HTTPRoute/tenant-carol/shop"])
			}
		})
	}
}

// TestAttackDisplacementSpendsAnotherBranch: bob fills ten places of the
// dns01 certificate (one order of his branch) and empties his nested
// tenants: their zones are Idle, their names spare. alice, with the rest of
// the certificate, adds a nested tenant with a route each run: each takes
// the place of one of bob's idle zones, and orderDNS01 charges the change
// to every branch whose apexes it adds or removes, bob's too. Nine runs of
// alice's spend bob's week; when a place frees up (carol deletes her
// nested tenant) and bob routes a name in a new nested tenant, his zone is
// Waiting ("branch bob.example.org caused 10 orders") though bob asked for
// two changes in the week. The design's rule: no branch may cause more than
// acmeOrdersPerBranch orders; here alice causes bob's.
func TestAttackDisplacementSpendsAnotherBranch(t *testing.T) {
	nss := platform()
	var routes []Route
	zone := func(parent string, i int) {
		ns := fmt.Sprintf("tenant-%s-n%02d", parent, i)
		nss = append(nss, labelled(ns, fmt.Sprintf("n%02d.%s.example.org", i, parent)))
		routes = append(routes, routeTo(ns, "r", fmt.Sprintf("www.n%02d.%s.example.org", i, parent)))
	}
	nss = append(nss, labelled("tenant-carol", "carol.example.org"))
	out := runs(t, Input{Spec: dns01Spec}, 15, func(i int, in *Input) {
		switch {
		case i == 1:
			routes = append(routes, routeTo("tenant-bob", "www", "www.bob.example.org"), routeTo("tenant-carol", "www", "www.carol.example.org"))
			for k := range 9 {
				zone("bob", k)
			}
			zone("carol", 0)
		case i == 2:
			routes = append(routes, routeTo("tenant-alice", "www", "www.alice.example.org"))
			for k := range 36 {
				zone("alice", k)
			}
		case i == 3:
			// bob empties his nested tenants.
			routes = slices.DeleteFunc(routes, func(r Route) bool { return strings.HasPrefix(r.Namespace, "tenant-bob-") })
		case i >= 4 && i < 13:
			zone("alice", 36+i)
		case i == 13:
			// carol deletes her nested tenant: a place frees up.
			nss = slices.DeleteFunc(nss, func(n Namespace) bool { return n.Name == "tenant-carol-n00" })
			routes = slices.DeleteFunc(routes, func(r Route) bool { return r.Namespace == "tenant-carol-n00" })
		case i == 14:
			zone("bob", 50)
		}
		in.Namespaces, in.Routes = nss, routes
	})
	for _, c := range out.ChildApexes {
		if c.Apex == "n50.bob.example.org" && c.State != v1alpha1.ChildApexListening {
			t.Errorf("bob's second change of the week waits: %s is %s (%s)", c.Apex, c.State, c.Message)
		}
	}
}

// TestChildContestUnderAFullBudgetKeepsItsParentOff: the listener budget is full (alice's
// and her nested tenant bob's zones took its last two places). alice routes
// shop.bob.alice.example.org, a name in bob's zone (a parent may: bob's
// listener does not admit her, so the name needs a pin, which the budget
// leaves out; on an edge Gateway the shared port-80 table serves it all
// the same). bob then claims the name: he wins it (his zone), its pin is
// still left out, and since bob's own listener is kept, isolate keeps alice
// off *.alice.example.org as a whole: www.alice.example.org, which nobody
// contests, is OverListenerLimit ("namespace tenant-alice is kept off
// listener …") and goes dark. TestAttackChildExcludesItsAncestor closed this
// only where the winner's zone has no listener; a nested tenant, which
// another party may run, takes its parent's every name by contesting one.
func TestChildContestUnderAFullBudgetKeepsItsParentOff(t *testing.T) {
	for name, spec := range map[string]v1alpha1.TenantGatewaySpec{"Edge": edgeSpec, "ExistingSecret": existingSpec} {
		t.Run(name, func(t *testing.T) {
			fnss, froutes := fillers(budgetFull(spec) - 2)
			in := Input{Spec: spec, Namespaces: append(nested(), fnss...), Routes: append(froutes,
				routeTo("tenant-alice", "www", "www.alice.example.org"),
				routeTo("tenant-alice-bob", "www", "www.bob.alice.example.org"),
			)}
			first := attackP(t, &in)
			next := fedBack(in, first)
			next.Routes = append(next.Routes, routeTo("tenant-alice", "shop", "shop.bob.alice.example.org"))
			second := attackP(t, &next)
			key := "www.alice.example.org HTTPRoute/tenant-alice/www"
			if s := hostnameStates(second)[key]; !isServed(v1alpha1.HostnameState(s)) {
				t.Fatalf("before bob's claim %s is %s", key, s)
			}
			third := fedBack(next, second)
			third.Routes = append(third.Routes, routeTo("tenant-alice-bob", "shop", "shop.bob.alice.example.org"))
			out := attackP(t, &third)
			// The documented limit: alice is kept off her listener
			// while the pin has no place, and her status says so and
			// why (Conflicts, known limits, in docs/design.md).
			for _, h := range out.Hostnames {
				if h.Hostname+" "+h.Route == key && (h.State != v1alpha1.HostnameOverListenerLimit || !strings.Contains(h.Message, "namespace tenant-alice is kept off listener")) {
					t.Errorf("bob claimed shop.bob.alice.example.org: alice's %s is %s (%s), want OverListenerLimit saying she is kept off her listener", key, h.State, h.Message)
				}
			}
		})
	}
}

// TestAttackFrozenEmptyZonesHoardTheCertificate: the zones of a branch with no order left are
// frozen on the dns01 certificate, idle or not, and the name cap may not
// give their places away. So alice fills the certificate with nested
// tenants, spends her week's orders (ten runs, one nested tenant each),
// then empties every nested tenant: they stay Listening with no route, and
// carol, a new tenant, is OverCertificateLimit ("give this child tenant a
// Gateway of its own") until alice's oldest order leaves the window, up to
// seven days. The rule that a zone no route uses must not hold a name
// ahead of a route that needs one) no longer holds for a spent branch; the
// root's charging: a zone that leaves to make room is charged
// to its own branch, so a spent branch's zones cannot leave.
func TestAttackFrozenEmptyZonesHoardTheCertificate(t *testing.T) {
	nss, routes, out := spentFullCertificate(t)
	in := fedBack(Input{Spec: dns01Spec, Namespaces: nss, Routes: routes, Now: t0.Add(12 * time.Hour)}, out)
	in.Namespaces = append(in.Namespaces, labelled("tenant-carol", "carol.example.org"))
	in.Routes = []Route{routes[0], routeTo("tenant-carol", "shop", "shop.carol.example.org")}
	out = settled(t, &in)
	again := fedBack(in, out)
	again.Now = in.Now.Add(time.Hour)
	out = settled(t, &again)
	for _, c := range out.ChildApexes {
		if c.Apex == "carol.example.org" && c.State != v1alpha1.ChildApexListening {
			t.Errorf("alice's 48 nested tenants route nothing, yet carol's zone is %s (%s)", c.State, c.Message)
		}
	}
}

// TestAttackLoserAnswersInTheSharedTable (found by the
// random search, case shape reduced): on an edge Gateway whose budget is
// full, alice's zone holds a listener. bob (her nested tenant, no listener
// yet) and the publisher cozy-dashboard both claim a name in bob's zone:
// bob wins, and neither his zone's listener nor the pin fits. The
// publisher's route stays attached to edge (*.example.org) and is the only
// one listing the name in the shared port-80 table, so it answers bob's
// name; status says its claim is Conflict ("the Gateway admits only
// namespace tenant-alice-bob for it"). unenforced re-judges a loser by the
// most specific kept wildcard (alice's, which does not admit it), not by
// the shared table. The oracle's checkServed reported it; fixed: on an edge
// Gateway unenforced also asks the shared table (sharedServes).
func TestAttackLoserAnswersInTheSharedTable(t *testing.T) {
	fnss, froutes := fillers(budgetFull(edgeSpec) - 1)
	in := Input{Spec: edgeSpec, Namespaces: append(nested(), fnss...), Routes: append(froutes, routeTo("tenant-alice", "www", "www.alice.example.org"))}
	first := attackP(t, &in)
	next := fedBack(in, first)
	next.Routes = append(next.Routes,
		routeTo("tenant-alice-bob", "shop", "shop.bob.alice.example.org"),
		routeTo("cozy-dashboard", "shop", "shop.bob.alice.example.org"),
	)
	attackP(t, &next)
}

// What held.

// TestAttackChainedPins: the chain of nested pins with the budget
// cutting anywhere but between *.b.apps and c.b.apps lists no name twice
// (the oracle's tables, per port and shared across HTTPS), over two runs;
// with room for all three every name is served.
func TestAttackChainedPins(t *testing.T) {
	for name, spec := range wildcardSpecs {
		for _, free := range []int{0, 1, 3, 10} {
			t.Run(fmt.Sprintf("%s/%d-free", name, free), func(t *testing.T) {
				fnss, froutes := fillers(budgetFull(spec) - free)
				out := twice(t, Input{Spec: spec, Namespaces: append(platform(), fnss...), Routes: append(froutes, chainRoutes()...)})
				if free < 3 {
					return
				}
				for _, key := range []string{"*.b.apps.example.org HTTPRoute/cozy-dashboard/b", "c.b.apps.example.org HTTPRoute/cozy-dashboard/c", "www.example.org HTTPRoute/tenant-root/www"} {
					if s := hostnameStates(out)[key]; !isServed(v1alpha1.HostnameState(s)) {
						t.Errorf("with %d places free %s is %s", free, key, s)
					}
				}
			})
		}
	}
}

// TestAttackLongNamesUnderAPin: a name of 253 characters (three
// 63-character labels) and a wildcard as long beside it (not above it),
// under the publisher's wildcard pin: their pins take the hash form, and no
// table lists a name twice, whatever the budget leaves.
func TestAttackLongNamesUnderAPin(t *testing.T) {
	long, wide := longUnderApps()
	wide = "*.s" + wide[3:]
	for name, spec := range wildcardSpecs {
		for _, free := range []int{1, 2, 3, 10} {
			t.Run(fmt.Sprintf("%s/%d-free", name, free), func(t *testing.T) {
				fnss, froutes := fillers(budgetFull(spec) - free)
				out := twice(t, Input{Spec: spec, Namespaces: append(platform(), fnss...), Routes: append(froutes,
					routeTo("tenant-root", "apps", "*.apps.example.org"),
					routeTo("cozy-dashboard", "apps", "*.apps.example.org"),
					routeTo("cozy-dashboard", "long", long),
					routeTo("cozy-dashboard", "wide", wide),
				)})
				if free < 3 {
					return
				}
				for _, key := range []string{long + " HTTPRoute/cozy-dashboard/long", wide + " HTTPRoute/cozy-dashboard/wide"} {
					if s := hostnameStates(out)[key]; !isServed(v1alpha1.HostnameState(s)) {
						t.Errorf("with %d places free %s… is %s", free, key[:20], s)
					}
				}
			})
		}
	}
}

// longUnderApps is a name of 253 characters under apps.example.org (three
// 63-character labels), and the wildcard one label above it.
func longUnderApps() (long, wide string) {
	l63 := strings.Repeat("q", 63)
	long = l63 + "." + l63 + "." + l63 + "." + strings.Repeat("r", 253-3*64-len(".apps.example.org")) + ".apps.example.org"
	return long, "*." + long[len(l63)+1:]
}

// TestAttackPassthroughUnderAPin: tls-api and a publisher's wildcard
// pin *.api.example.org with names under it, the owner's losing wildcard
// that also lists api.example.org, and a route without hostnames: one
// filter chain per server name, and api.example.org stays the TLSRoute's.
func TestAttackPassthroughUnderAPin(t *testing.T) {
	for name, spec := range map[string]v1alpha1.TenantGatewaySpec{"DNS01": dns01Spec, "ExistingSecret": existingSpec} {
		t.Run(name, func(t *testing.T) {
			spec.TLSPassthroughServices = []v1alpha1.DNSLabel{"api"}
			out := twice(t, Input{Spec: spec, Namespaces: platform(), Routes: []Route{
				tlsRoute("cozy-dashboard", "api", "api.example.org"),
				routeTo("tenant-root", "w", "*.api.example.org", "api.example.org"),
				routeTo("cozy-dashboard", "w", "*.api.example.org"),
				routeTo("cozy-dashboard", "x", "x.api.example.org", "*.y.api.example.org"),
				routeTo("tenant-root", "any"),
			}})
			if s := hostnameStates(out)["api.example.org TLSRoute/cozy-dashboard/api"]; s != string(v1alpha1.HostnamePassthrough) {
				t.Errorf("the TLSRoute on api.example.org is %s, want Passthrough", s)
			}
		})
	}
}

// TestAttackTenantNamedLikeAService: a tenant whose apex is a
// passthrough service's name (tenant-api, host api.example.org) routes its
// bare apex and a name in its zone: the bare apex stays the platform's
// TLSRoute's (NotDelegated for the tenant), so no HTTPS listener or pin
// makes a second filter chain for api.example.org beside tls-api.
func TestAttackTenantNamedLikeAService(t *testing.T) {
	for name, spec := range map[string]v1alpha1.TenantGatewaySpec{"HTTP01": http01Spec, "DNS01": dns01Spec, "ExistingSecret": existingSpec} {
		t.Run(name, func(t *testing.T) {
			spec.TLSPassthroughServices = []v1alpha1.DNSLabel{"api"}
			spec.AttachedNamespaces = []v1alpha1.DNSLabel{"cozy-dashboard", "cozy-api"}
			nss := append(platform(), labelled("cozy-api", ""), labelled("tenant-api", "api.example.org"))
			out := twice(t, Input{Spec: spec, Namespaces: nss, Routes: []Route{
				tlsRoute("cozy-api", "api", "api.example.org"),
				routeTo("tenant-api", "own", "api.example.org", "www.api.example.org"),
			}})
			want := map[string]string{
				"api.example.org TLSRoute/cozy-api/api":    string(v1alpha1.HostnamePassthrough),
				"api.example.org HTTPRoute/tenant-api/own": string(v1alpha1.HostnameNotDelegated),
			}
			for key, s := range want {
				if got := hostnameStates(out)[key]; got != s {
					t.Errorf("%s is %s, want %s", key, got, s)
				}
			}
		})
	}
}
