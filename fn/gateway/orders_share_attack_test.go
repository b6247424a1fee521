package gateway

import (
	"fmt"
	"slices"
	"testing"
	"time"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
)

// Attacks on a branch's share split among its records: orders numbered within their
// record (Seq), and a record capped at its even part of what its branch had
// left (ledger.part: ownUsed + rest/records, the remainder to the oldest
// record). Orders are counted as cert-manager makes them (platformRun).

// branchUsed is the orders of the window the platform's records charge to
// branch at now.
func (p *platformRun) branchUsed(branch string, now time.Time, window time.Duration) int {
	n := 0
	for _, r := range p.records {
		for _, o := range r.Orders {
			if o.At.Add(window).After(now) {
				for _, b := range o.Branches {
					if b == branch {
						n++
					}
				}
			}
		}
	}
	return n
}

func TestAttackWaitingNestedGatewaysStarveAnOlderRecord(t *testing.T) {
	// The branch alice.example.org: alice's own Gateway (the oldest
	// record, one application), her nested tenant carol's Gateway (one
	// application), and her nested tenant bob, hostile, who makes thirty
	// nested Tenants of his own with gateway: true, each with one route
	// (all in alice's branch, all younger than carol's). The first ones
	// order; once the branch has fewer orders left than it has records,
	// rest/records is 0 for every record but the oldest (alice's, which
	// asks for nothing more), and the others wait for one order each,
	// which keeps them counted. Then carol asks for twenty applications.
	//
	// What must hold: within a branch an older record's demand comes
	// before a younger one's (docs/design.md, Certificate orders): carol,
	// older than every one of bob's records, gets what the branch has
	// left (up to one order per Gateway left unused at the share's end
	// at most), and the branch's orders are not left unused while
	// Gateways of it wait.
	p := &platformRun{}
	alice := owning("tenant-alice", "alice.example.org", v1alpha1.CertModeHTTP01)
	alice.Routes = []Route{ownRoute(alice.Namespace, "apps", "a00.alice.example.org")}
	alice, _ = p.ordered(t, alice, t0)
	carol := owning("tenant-alice-carol", "carol.alice.example.org", v1alpha1.CertModeHTTP01)
	carol.Routes = []Route{ownRoute(carol.Namespace, "apps", "c00.carol.alice.example.org")}
	carol, _ = p.ordered(t, carol, t0.Add(time.Minute))
	var bobs []Input
	for k := range 30 {
		ns := fmt.Sprintf("tenant-alice-bob-x%d", k)
		apex := fmt.Sprintf("x%d.bob.alice.example.org", k)
		g := owning(ns, apex, v1alpha1.CertModeHTTP01)
		g.Routes = []Route{ownRoute(ns, "r", "www."+apex)}
		g, _ = p.ordered(t, g, t0.Add(time.Hour+time.Duration(k)*time.Minute))
		bobs = append(bobs, g)
	}
	const branch = "alice.example.org"
	before := p.branchUsed(branch, t0.Add(2*time.Hour), letsEncrypt.Window)
	carol.Routes = []Route{ownRoute(carol.Namespace, "apps", hosts(20, "c%02d.carol.alice.example.org")...)}
	carol, out := p.aDayHourly(t, carol, bobs, t0.Add(2*time.Hour))
	now := t0.Add(26 * time.Hour)
	used := p.branchUsed(branch, now, letsEncrypt.Window)
	waiting := 0
	for _, r := range p.records {
		waiting += r.Waiting[branch]
	}
	const share = 25
	t.Logf("branch used %d before carol asked, %d after a day; carol listens on %d of 20; %d orders waiting in the branch", before, used, listening(out), waiting)
	if left := share - used; left > 1 && waiting > 0 {
		t.Errorf("after a day, alice's branch has ordered %d of its share of %d: %d orders unused while its Gateways wait for %d", used, share, left, waiting)
	}
	if want := min(20, share-before+1); listening(out) < want-1 {
		t.Errorf("carol, older than every record of bob's, listens on %d of her 20 hostnames; the branch had %d orders left when she asked, so she should have at least %d", listening(out), share-before, want-1)
	}
}

func TestAttackRootAndNestedGatewayRaiseABranchAtOnce(t *testing.T) {
	// alice has no Gateway of her own (her namespace publishes through
	// the root Gateway), her nested tenant n has one. The root's record
	// holds the platform's own order (branch tenant-root) and none of
	// alice's branch; n's holds one order of alice's branch. Then alice
	// asks for thirty applications on the root Gateway and n for thirty
	// on its own, with one apply: both TenantGateways reconcile reading
	// the ledger before the other's new orders are written. The root
	// counts n's record among alice's branch's records (rest 24 over 2:
	// 12); n does not count the root's, which holds no order of the
	// branch yet (records 1: its even part is all 24 left), nor does its
	// part subtract anything of the root's.
	//
	// What must hold (design.md: Gateways of a branch raising their
	// demand at once take no more than is left): alice's branch holds no
	// more than its share (25) within the window.
	p := &platformRun{}
	root := platformGateway()
	root, _ = p.ordered(t, root, t0)
	n := nestedGateway("a00.n.alice.example.org")
	n, _ = p.ordered(t, n, t0.Add(time.Minute))
	base := slices.Clone(p.records)
	now := t0.Add(time.Hour)
	root.Routes = append(root.Routes, routeTo("tenant-alice", "apps", hosts(30, "r%02d.alice.example.org")...))
	n.Routes = []Route{ownRoute(n.Namespace, "apps", hosts(30, "a%02d.n.alice.example.org")...)}
	p.records = slices.Clone(base)
	_, rootOut := p.run(t, root, now)
	rootRec := *rootOut.Record
	p.records = slices.Clone(base)
	_, nOut := p.run(t, n, now)
	p.records = withRecord(p.records, writerOf(&root), &rootRec)
	const branch, share = "alice.example.org", 25
	used := p.branchUsed(branch, now, letsEncrypt.Window)
	t.Logf("root listens on %d, n on %d", listening(rootOut), listening(nOut))
	if used > share {
		t.Errorf("the root Gateway and alice's nested Gateway raising her branch's demand at once hold %d orders of it; its share is %d", used, share)
	}
}

func TestAttackNestedGatewaysRaiseTheirDemandAtOnceAfterTheWindow(t *testing.T) {
	// TestAttackNestedGatewaysRaiseTheirDemandAtOnce, a window later.
	// alice keeps ten nested Gateways with one application each, ordered
	// at t0. A window later those orders have left it: every record still
	// holds its order (out of the window) and says nothing waits, so each
	// counts for no demand of alice's branch, and each Gateway's own
	// record is confirmed (its ConfigMap holds what its Object was last
	// applied with). She then gives each thirty applications with one
	// apply; the ten reconcile together, each reading the others' records
	// as they were. Each finds records = 1 (none of the others has demand
	// of the branch), its even part all the branch has left (25) and
	// nothing older before it.
	//
	// What must hold: alice's branch holds at most twice its share (the
	// bound TestAttackNestedGatewaysRaiseTheirDemandAtOnce keeps; the design
	// says no more than is left), and the registered domain no more
	// than the quota, within any window.
	p := &platformRun{}
	gws := nestedWithAnOrder(t, p, 10)
	later := t0.Add(letsEncrypt.Window + time.Hour)
	base := slices.Clone(p.records)
	var written []acme.OrderRecord
	for k := range gws {
		g := gws[k]
		g.Routes = []Route{ownRoute(g.Namespace, "apps", hosts(30, "a%02d."+g.Spec.Apex)...)}
		p.records = slices.Clone(base) // the reading: none of the others' new orders yet
		_, out := p.run(t, g, later)
		written = append(written, *out.Record)
	}
	alice := 0
	for _, r := range written {
		for _, o := range r.Orders {
			if o.At.Add(letsEncrypt.Window).After(later) {
				alice++
			}
		}
	}
	const share = 25
	if alice > 2*share {
		t.Errorf("a window after their last orders, ten nested Gateways of alice raising their demand at once hold %d orders; her branch's share is %d", alice, share)
	}
	if n := p.mostInAWindow(letsEncrypt); n > letsEncrypt.Limit {
		t.Errorf("cert-manager ordered %d certificates within %s; the CA issues at most %d for example.org", n, letsEncrypt.Window, letsEncrypt.Limit)
	}
}

func TestAttackSeqRestartedAfterTheWindowWhileTheConfigMapLags(t *testing.T) {
	// Orders are identified across the copies of a record by
	// (Certificate, names, Seq), and Seq is one more than the highest of
	// the copies. alice's nested Gateway n orders www at t0 (Seq 1). A
	// window later she drops www and, within the same second, asks for it
	// again, then again, while provider-kubernetes is behind: the
	// ConfigMap still holds the record of t0 (www, Seq 1, out of the
	// window), the Object the emptied one. What must hold: each Certificate
	// composed anew is an order of the ledger (no two merged into one);
	// an order out of the window is never merged with one in it.
	p := &platformRun{}
	n := owning("tenant-alice-n", "n.alice.example.org", v1alpha1.CertModeHTTP01)
	on := []Route{ownRoute(n.Namespace, "apps", "www.n.alice.example.org")}
	n.Routes = on
	n, _ = p.ordered(t, n, t0)
	stale := slices.Clone(p.records)
	later := t0.Add(letsEncrypt.Window + time.Hour)
	for i, routes := range [][]Route{nil, on, nil, on} {
		n.Routes = routes
		n, _ = p.run(t, n, later)
		if i < 2 {
			p.records = slices.Clone(stale) // the ConfigMap behind
		}
	}
	if issued, recorded := len(p.orders), p.recordedOrders(); issued > recorded+1 { // the order of t0 left the record with the window
		t.Errorf("cert-manager issued %d certificates, the ledger holds %d orders of the window (one left it)", issued, recorded)
	}
	if got := p.branchUsed("alice.example.org", later, letsEncrypt.Window); got != 2 {
		t.Errorf("after www was ordered twice a window after t0, alice's branch has %d orders in the window, want 2", got)
	}
}
