package gateway

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// Attacks on the remainder of a branch's even split: a record's even part split
// among every record that may order for the branch (ledger.part: members),
// the remainder to the oldest member that said it waits for the branch
// (remainderTo). Orders are counted as cert-manager makes them
// (platformRun).

// deadAsker makes a nested Gateway of alice's branch at now that orders
// one hostname, then asks for a second one while provider-kubernetes has
// not written its record yet (so that run may order nothing and its
// record says it waits), and is deleted: its record, holding an order,
// stays (orphaned) and says it waits for alice's branch for a window.
func deadAsker(t *testing.T, p *platformRun, ns, apex, platformApex, branch string, now time.Time) {
	t.Helper()
	d := owning(ns, apex, v1alpha1.CertModeHTTP01)
	d.PlatformApex = platformApex
	d.Routes = []Route{ownRoute(ns, "apps", "a00."+apex)}
	d, _ = p.run(t, d, now) // the first run writes the record and waits
	before := slices.Clone(p.records)
	d, _ = p.run(t, d, now) // orders a00
	p.records = before      // the ConfigMap behind the Object
	d.Routes = []Route{ownRoute(ns, "apps", "a00."+apex, "a01."+apex)}
	d, out := p.run(t, d, now)
	if out.Record == nil || out.Record.Waiting[branch] == 0 || len(out.Record.Orders) == 0 {
		t.Fatalf("the dead asker's record should hold its order and say it waits: %+v", out.Record)
	}
	p.gone(d)
}

func TestAttackDeadAskerTakesTheRemainderForAWindow(t *testing.T) {
	// The branch alice.example.org. bob, alice's hostile nested tenant,
	// makes a nested Gateway d (one application) and, while
	// provider-kubernetes is a moment behind, asks it for one more: that
	// run may order nothing, so d's record says it waits for the branch;
	// bob then deletes d. Its record (it holds an order) stays, and says
	// for a window that d waits. An hour later alice's nested tenant
	// carol makes her Gateway (one application), and bob makes 22 more
	// nested Gateways, younger than carol, each with one route: they wait
	// for an order each and so count among the branch's records. Then
	// carol asks for twenty applications.
	//
	// The branch has 22 of its 25 orders left and 25 records: rest/records
	// is 0 for each, and the remainder goes to the oldest record that
	// says it waits for the branch, d's, whose writer is gone.
	//
	// What must hold (a branch of many Gateways is never stuck with
	// orders left and an older Gateway waiting; the demand of
	// a TenantGateway deleted while it waited counts for its own orders
	// alone): carol, older than every live record of the branch but her
	// own, gets what the branch has left within a day, not a window
	// later.
	p := &platformRun{}
	const branch, share = "alice.example.org", 25
	deadAsker(t, p, "tenant-alice-bob-d", "d.bob.alice.example.org", "", branch, t0)
	carol := owning("tenant-alice-carol", "carol.alice.example.org", v1alpha1.CertModeHTTP01)
	carol.Routes = []Route{ownRoute(carol.Namespace, "apps", "c00.carol.alice.example.org")}
	carol, _ = p.ordered(t, carol, t0.Add(time.Hour))
	var bobs []Input
	for k := range 22 {
		ns := fmt.Sprintf("tenant-alice-bob-x%d", k)
		apex := fmt.Sprintf("x%d.bob.alice.example.org", k)
		g := owning(ns, apex, v1alpha1.CertModeHTTP01)
		g.Routes = []Route{ownRoute(ns, "r", "www."+apex)}
		g, _ = p.run(t, g, t0.Add(2*time.Hour)) // unconfirmed: waits
		bobs = append(bobs, g)
	}
	before := p.branchUsed(branch, t0.Add(3*time.Hour), letsEncrypt.Window)
	carol.Routes = []Route{ownRoute(carol.Namespace, "apps", hosts(20, "c%02d.carol.alice.example.org")...)}
	carol, out := p.aDayHourly(t, carol, bobs, t0.Add(3*time.Hour))
	now := t0.Add(27 * time.Hour)
	used := p.branchUsed(branch, now, letsEncrypt.Window)
	waiting := 0
	for _, r := range p.records {
		waiting += r.Waiting[branch]
	}
	t.Logf("branch used %d before carol asked, %d after a day; carol listens on %d of 20; %d orders waiting in the branch", before, used, listening(out), waiting)
	if left := share - used; left > 1 && waiting > 0 {
		t.Errorf("after a day, alice's branch has ordered %d of its share of %d: %d orders unused while its Gateways wait for %d (a dead record of bob's takes the remainder each run, until its demand leaves the window)", used, share, left, waiting)
	}
	if want := min(20, share-before-1); listening(out) < want {
		t.Errorf("after a day, carol listens on %d of her 20 hostnames; her branch had %d of its %d orders left when she asked", listening(out), share-before, share)
	}
	// How long: until d's word that it waits leaves the window.
	for _, at := range []time.Duration{letsEncrypt.Window - time.Hour, letsEncrypt.Window + time.Hour} {
		now := t0.Add(at)
		carol, out = p.run(t, carol, now)
		for k := range bobs {
			bobs[k], _ = p.run(t, bobs[k], now)
		}
		t.Logf("at t0+%s carol listens on %d of 20", at, listening(out))
	}
}

func TestAttackOutsideApexGatewaysInflateEveryBranch(t *testing.T) {
	// The platform's apex is k8s.example.org; eve's Tenant was given an
	// apex of its own outside it, evil.example.org (the registered domain
	// is the same: one quota). A Gateway outside the platform's apex
	// counts among the records of every branch of the platform's tree
	// (memberOf), so eve makes 30 nested Tenants with gateway: true
	// (x<k>.evil.example.org, one application each): 31 records in every
	// branch of the platform. In alice's branch, her nested tenant d's
	// Gateway was deleted while it waited for an order (an everyday
	// event, no attacker needed); her nested tenant carol then asks for
	// twenty applications.
	//
	// What must hold: a tenant's records do not slow another tenant's
	// branch: carol, the oldest live record of alice's branch, gets what
	// her branch has left within a day.
	p := &platformRun{}
	const platformApex, branch = "k8s.example.org", "alice.k8s.example.org"
	deadAsker(t, p, "tenant-alice-d", "d.alice.k8s.example.org", platformApex, branch, t0)
	carol := owning("tenant-alice-carol", "carol.alice.k8s.example.org", v1alpha1.CertModeHTTP01)
	carol.PlatformApex = platformApex
	carol.Routes = []Route{ownRoute(carol.Namespace, "apps", "c00.carol.alice.k8s.example.org")}
	carol, _ = p.ordered(t, carol, t0.Add(time.Hour))
	var eves []Input
	for k := range 30 {
		ns := fmt.Sprintf("tenant-eve-x%d", k)
		apex := fmt.Sprintf("x%d.evil.example.org", k)
		g := owning(ns, apex, v1alpha1.CertModeHTTP01)
		g.PlatformApex = platformApex
		g.Routes = []Route{ownRoute(ns, "r", "www."+apex)}
		g, _ = p.ordered(t, g, t0.Add(2*time.Hour))
		eves = append(eves, g)
	}
	before := p.branchUsed(branch, t0.Add(3*time.Hour), letsEncrypt.Window)
	carol.Routes = []Route{ownRoute(carol.Namespace, "apps", hosts(20, "c%02d.carol.alice.k8s.example.org")...)}
	carol, out := p.aDayHourly(t, carol, eves, t0.Add(3*time.Hour))
	now := t0.Add(27 * time.Hour)
	used, evil := p.branchUsed(branch, now, letsEncrypt.Window), p.branchUsed("evil.example.org", now, letsEncrypt.Window)
	in := carol
	in.Now, in.Ledger = now, slices.Clone(p.records)
	l := newLedger(&in)
	l.want(branch, 20-listening(out)) // carol's demand as her run sees it
	l.settle()
	share := l.share[branch]
	t.Logf("alice's branch used %d before carol asked, %d after a day (share %d); eve's branch %d; carol listens on %d of 20", before, used, share, evil, listening(out))
	if n := p.mostInAWindow(letsEncrypt); n > letsEncrypt.Limit {
		t.Errorf("cert-manager ordered %d certificates within %s; the CA issues at most %d for example.org", n, letsEncrypt.Window, letsEncrypt.Limit)
	}
	if want := min(20, share-before-1); listening(out) < want {
		t.Errorf("after a day, carol listens on %d of her 20 hostnames; alice's branch had %d of its share of %d left (eve's 30 Gateways outside the platform's apex count among its records)", listening(out), share-before, share)
	}
}

func TestAttackRootAndNestedGatewayWaitingTogetherRoundAfterRound(t *testing.T) {
	// TestAttackRootAndNestedGatewayRaiseABranchAtOnce, kept up: the root
	// Gateway (alice's applications) and alice's nested Gateway n both
	// ask for thirty applications of alice's branch and reconcile
	// together every hour, each reading the ledger as it was before the
	// other's run of that hour. From the second hour both records say
	// they wait, so each reads the other as a member that waits, and
	// only one of them (the oldest that waits) may count the remainder
	// as its own. With bob, another nested tenant of alice, holding ten
	// records of the branch (one order each), the branch's records
	// outnumber what it has left after a few hours.
	//
	// What must hold: alice's branch holds no more than its share within
	// the window, however many hours they race; and it is not left with
	// orders unused while both wait.
	p := &platformRun{}
	root := platformGateway()
	root, _ = p.ordered(t, root, t0)
	n := nestedGateway("a00.n.alice.example.org")
	n, _ = p.ordered(t, n, t0.Add(time.Minute))
	for k := range 10 {
		ns := fmt.Sprintf("tenant-alice-bob-x%d", k)
		apex := fmt.Sprintf("x%d.bob.alice.example.org", k)
		g := owning(ns, apex, v1alpha1.CertModeHTTP01)
		g.Routes = []Route{ownRoute(ns, "r", "www."+apex)}
		p.ordered(t, g, t0.Add(2*time.Minute))
	}
	root.Routes = append(root.Routes, routeTo("tenant-alice", "apps", hosts(30, "r%02d.alice.example.org")...))
	n.Routes = []Route{ownRoute(n.Namespace, "apps", hosts(30, "a%02d.n.alice.example.org")...)}
	const branch, share = "alice.example.org", 25
	var rootOut, nOut *Output
	for h := range 12 {
		now := t0.Add(time.Hour + time.Duration(h)*time.Hour)
		base := slices.Clone(p.records)
		root, rootOut = p.run(t, root, now)
		rootRec := rootOut.Record
		p.records = slices.Clone(base)
		n, nOut = p.run(t, n, now)
		p.records = withRecord(p.records, writerOf(&root), rootRec)
		if used := p.branchUsed(branch, now, letsEncrypt.Window); used > share {
			t.Fatalf("hour %d: the root Gateway and alice's nested Gateway racing hold %d orders of her branch; its share is %d", h, used, share)
		}
	}
	used := p.branchUsed(branch, t0.Add(13*time.Hour), letsEncrypt.Window)
	t.Logf("after 12 hours alice's branch holds %d orders; root listens on %d, n on %d", used, listening(rootOut), listening(nOut))
	if used < share-1 {
		t.Errorf("after 12 hours alice's branch holds %d orders of its share of %d while the root and n wait", used, share)
	}
}

func TestAttackDeadAskerStallsTheRootGatewayForABranch(t *testing.T) {
	// TestAttackDeadAskerTakesTheRemainderForAWindow with the platform's
	// root Gateway as the one that waits. The root's record goes when a
	// window passes without an order of it (emptied, then dropped), and
	// its next record is the youngest of the domain. bob, alice's nested
	// tenant, keeps a dead record (deadAsker) that says it waits for
	// alice's branch; then alice asks for twenty applications on the root
	// Gateway, and bob makes 22 nested Gateways that wait for an order
	// each (members of alice's branch, younger than the root's record).
	//
	// What must hold: the root Gateway, the oldest live record asking for
	// alice's branch, gets what the branch has left within a day.
	p := &platformRun{}
	const branch, share = "alice.example.org", 25
	root := platformGateway()
	root, _ = p.ordered(t, root, t0.Add(-letsEncrypt.Window-2*time.Hour))
	root, _ = p.run(t, root, t0.Add(-time.Hour)) // its order left the window: emptied
	root, _ = p.run(t, root, t0.Add(-time.Hour)) // and dropped
	for _, r := range p.records {
		if r.Writer() == writerOf(&root) {
			t.Fatalf("the root's record should be gone a window after its last order: %+v", r)
		}
	}
	deadAsker(t, p, "tenant-alice-bob-d", "d.bob.alice.example.org", "", branch, t0)
	root.Routes = append(root.Routes, routeTo("tenant-alice", "apps", hosts(20, "r%02d.alice.example.org")...))
	root, _ = p.run(t, root, t0.Add(time.Hour)) // a record again, the youngest but bob's next ones
	var bobs []Input
	for k := range 22 {
		ns := fmt.Sprintf("tenant-alice-bob-x%d", k)
		apex := fmt.Sprintf("x%d.bob.alice.example.org", k)
		g := owning(ns, apex, v1alpha1.CertModeHTTP01)
		g.Routes = []Route{ownRoute(ns, "r", "www."+apex)}
		g, _ = p.run(t, g, t0.Add(2*time.Hour))
		bobs = append(bobs, g)
	}
	root, out := p.aDayHourly(t, root, bobs, t0.Add(3*time.Hour))
	alice := 0
	for _, h := range out.Hostnames {
		if h.State == v1alpha1.HostnameListening && strings.HasSuffix(h.Hostname, ".alice.example.org") {
			alice++
		}
	}
	used := p.branchUsed(branch, t0.Add(27*time.Hour), letsEncrypt.Window)
	t.Logf("after a day alice's branch holds %d orders; the root listens on %d of alice's 20", used, alice)
	if alice < 20 {
		t.Errorf("after a day the root Gateway listens on %d of alice's 20 hostnames; her branch holds %d of its share of %d (a dead record of bob's takes the remainder each run)", alice, used, share)
	}
}
