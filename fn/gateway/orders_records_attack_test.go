package gateway

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"

	kobjv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/object/v1alpha1"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// Attacks on the order ledger's records: a hostile tenant with full
// rights in its own namespaces and nested Tenants against the quota, the
// other branches' shares, other tenants' Certificates, the ledger's size
// and its own history (reaping, deleting, re-creating). Each counts what cert-manager would issue from what
// is composed (platformRun), not what the ledger says.

// recordedOrders is the number of orders the cluster's records hold.
func (p *platformRun) recordedOrders() int {
	n := 0
	for _, r := range p.records {
		n += len(r.Orders)
	}
	return n
}

// wildcardNames is the dns01 Certificate as out composes it (nil when it
// does not).
func wildcardNames(out *Output) []string {
	for _, r := range out.Resources {
		if c, ok := r.Object.(*cmv1.Certificate); ok && r.Key == KeyCertificateWildcard {
			return c.Spec.DNSNames
		}
	}
	return nil
}

func TestAttackDNS01ZoneAddedWithTheLastOrderWhileNotObserved(t *testing.T) {
	// alice adds a nested zone to the dns01 certificate every hour until
	// her branch's share is spent. The run after the one that spent her
	// last order reads the wildcard Certificate as Crossplane observed it
	// before that run applied it (a cache behind its own write, as
	// TestOrdersCountedOnce allows): her new zone looks "added" again, the
	// share refuses it, the zone waits and the certificate is composed
	// without it, so cert-manager issues the previous name set again,
	// charged to nobody, and the zone alice paid for stays off until her
	// order leaves the window. When the observation lags a run every run,
	// the next run reads the certificate with the zone and puts it back:
	// the name sets alternate every run, each change charged to nobody.
	//
	// What must hold: every change of the wildcard Certificate's names the
	// function composes is an order of the ledger; a zone that an open
	// order of the own record put on the certificate is on it (as
	// orderHTTP01 asks pending before charging), so a stale observation
	// neither charges it twice nor takes it off.
	for name, lag := range map[string]func(i int) int{
		"observed at once":                        func(int) int { return 0 },
		"observed a run late once, after order 4": func(i int) int { return map[bool]int{true: 1}[i == 4] },
		"observed a run late, every run":          func(int) int { return 1 },
	} {
		t.Run(name, func(t *testing.T) {
			q := acme.OrderQuota{Limit: 8, Window: 7 * 24 * time.Hour}
			p := &platformRun{}
			in := rootInput(dns01Spec)
			in.Quota = q
			nss := platform()
			var routes []Route
			var history [][]string // the wildcard names each run composed
			var out *Output
			for i := range 24 {
				ns := fmt.Sprintf("tenant-alice-n%02d", i)
				nss = append(nss, labelled(ns, fmt.Sprintf("n%02d.alice.example.org", i)))
				routes = append(routes, routeTo(ns, "r", fmt.Sprintf("www.n%02d.alice.example.org", i)))
				in.Namespaces, in.Routes, in.NamedNamespaces = slices.Clone(nss), slices.Clone(routes), nil
				in, out = p.run(t, in, t0.Add(time.Duration(i)*time.Hour))
				history = append(history, wildcardNames(out))
				t.Logf("run %d: %d names, %d orders issued", i, len(history[i]), len(p.orders))
				// Crossplane's cache shows the Certificate as it was
				// lagged runs ago.
				if k := len(history) - 1 - lag(i); lag(i) > 0 && k >= 0 && history[k] != nil {
					in.Observed[KeyCertificateWildcard] = &kube.ObservedResource{DNSNames: history[k]}
				}
			}
			if issued, recorded := len(p.orders), p.recordedOrders(); issued > recorded {
				t.Errorf("cert-manager issued the wildcard certificate %d times, the ledger holds %d orders: %d changes of its names were charged to nobody (quota %d)", issued, recorded, issued-recorded, q.Limit)
			}
			if n := p.mostInAWindow(q); n > q.Limit {
				t.Errorf("cert-manager issued %d certificates within %s; the quota is %d", n, q.Window, q.Limit)
			}
		})
	}
}

func TestAttackReaperDeletesALiveRecord(t *testing.T) {
	// A record that counts for nothing is emptied by any run through a
	// reap Object with the default deletion policy, composed until
	// Crossplane observes it and dropped by the next run, which deletes
	// the ConfigMap. alice tries to have a live Gateway's record reaped
	// while it orders. She owns a Gateway r that orders nothing and, for
	// each k, a nested Gateway gk:
	//
	//   1. gk asks for 30 applications (its record says it waits), then
	//      its routes are removed: gk writes its record emptied, once;
	//   2. r runs: were gk's record stale, r would compose its reaper;
	//   3. the routes come back: gk orders its share and its Object
	//      writes the record with those orders;
	//   4. r runs again, dropping any reaper, whose deletion (or alice's:
	//      the reaper Object lives in her namespace) takes the ConfigMap,
	//      so that every run of the domain reads the ledger without gk's
	//      orders until provider-kubernetes syncs gk's Object again.
	//
	// What must hold: no run reaps a record whose writer said within the
	// window that it is alive (its record is fresh), and orders stay
	// within the quota.
	p := &platformRun{}
	r := owning("tenant-alice-r", "r.alice.example.org", v1alpha1.CertModeHTTP01)
	now := t0
	tick := func() time.Time { now = now.Add(time.Minute); return now }
	r, _ = p.run(t, r, tick())
	for k := range 3 {
		ns := fmt.Sprintf("tenant-alice-g%d", k)
		apex := fmt.Sprintf("g%d.alice.example.org", k)
		g := owning(ns, apex, v1alpha1.CertModeHTTP01)
		apps := []Route{ownRoute(ns, "apps", hosts(30, "a%02d."+apex)...)}
		self := writerOf(&g)
		// 1.
		g.Routes = apps
		g, _ = p.run(t, g, tick())
		g.Routes = nil
		var out *Output
		g, out = p.run(t, g, tick())
		if out.Record == nil || !out.Record.Empty() {
			t.Fatalf("g%d's record once its routes left: %+v, want it written emptied", k, out.Record)
		}
		// 2. The reaper writes the record as it was (emptied).
		emptied := *out.Record
		r, out = p.run(t, r, tick())
		reaped := false
		for _, res := range out.Resources {
			reaped = reaped || res.Key == KeyOrderLedgerReapPrefix+fullHash(self)
		}
		if reaped {
			t.Errorf("r composes a reaper of live g%d's emptied record", k)
			p.records = withRecord(p.records, self, &emptied)
		}
		// 3.
		g.Routes = apps
		g, _ = p.run(t, g, tick())
		// 4. Crossplane observed the reaper: r drops it, and its
		// deletion takes gk's record.
		r, _ = p.run(t, r, tick())
		if reaped {
			p.records = withRecord(p.records, self, nil)
		}
		_ = g
	}
	if n := p.mostInAWindow(letsEncrypt); n > letsEncrypt.Limit {
		t.Errorf("alice's Gateways made cert-manager order %d certificates within %s (the ledger now holds %d of them); the CA issues at most %d for example.org", n, letsEncrypt.Window, p.recordedOrders(), letsEncrypt.Limit)
	}
}

func TestAttackManyWaitingGatewaysGrowTheLedger(t *testing.T) {
	// alice makes 150 nested Tenants with gateway: true, each with one
	// application: each TenantGateway writes a record, and those that
	// cannot order (her share is spent after a few) keep a record that
	// says they wait, so none is stale. Every TenantGateway of example.org
	// reads every record on every run.
	//
	// The documented limit (design.md, Certificate orders: not bounded):
	// the ledger grows with the TenantGateways of the domain, one record
	// each, as their Gateways, Issuers and Objects do; what must hold is
	// that it grows by no more than one small record per Gateway, so a
	// tenant's Gateways cost the domain's readers what the platform's
	// quota on Tenants allows and no more.
	const gateways = 150
	p := &platformRun{}
	root := rootInput(http01Spec)
	root.Routes = []Route{routeTo("tenant-bob", "shop", "shop.bob.example.org")}
	root, _ = p.ordered(t, root, t0)
	for k := range gateways {
		ns := fmt.Sprintf("tenant-alice-g%03d", k)
		apex := fmt.Sprintf("g%03d.alice.example.org", k)
		g := owning(ns, apex, v1alpha1.CertModeHTTP01)
		g.Routes = []Route{ownRoute(ns, "app", "www."+apex)}
		p.ordered(t, g, t0.Add(time.Duration(k)*time.Minute))
	}
	withOrders, waiting := 0, 0
	for _, r := range p.records {
		if len(r.Orders) > 0 {
			withOrders++
		} else if len(r.Waiting) > 0 {
			waiting++
		}
	}
	if bound := gateways + 1; len(p.records) > bound {
		t.Errorf("alice's %d nested Gateways left %d records of example.org (%d holding orders, %d only waiting), want at most one per TenantGateway (%d)", gateways, len(p.records), withOrders, waiting, bound)
	}
	for _, r := range p.records {
		if b, _ := json.Marshal(r); len(r.Orders) == 0 && len(b) > 1024 {
			t.Errorf("%s's record, which holds no order, is %d bytes: want at most 1 KiB", r.TenantGateway, len(b))
		}
	}
}

func TestAttackStaggeredNestedGatewaysOrderMoreThanAShareOver(t *testing.T) {
	// docs/design.md bounds Gateways deciding before reading each other's
	// records at "a branch's share over at most". alice creates ten nested
	// Gateways one after another, each with thirty applications. Each
	// one's first record (it waits) is written before the next one
	// decides, but provider-kubernetes writes the records that hold
	// orders only after all ten decided (they are updates of Objects it
	// already synced, queued behind the creations). The first sees only
	// itself and orders alice's whole share; the second sees the first
	// waiting and splits the share with it; the k-th orders a k-th of it:
	// a harmonic sum, not one share over.
	//
	// What must hold: what Gateways deciding from stale readings order is
	// bounded as documented (at most a branch's share over), e.g. a
	// branch's orders granted by one writer at a time, or a record ordering
	// only its part of the share as the waiting records it read split it
	// in the worst case.
	p := &platformRun{}
	p.ordered(t, platformGateway(), t0)
	base := p.records
	var waitingRecords, orderingRecords []acme.OrderRecord
	share := 0
	for k := range 10 {
		ns := fmt.Sprintf("tenant-alice-n%d", k)
		apex := fmt.Sprintf("n%d.alice.example.org", k)
		g := owning(ns, apex, v1alpha1.CertModeHTTP01)
		g.Routes = []Route{ownRoute(ns, "apps", hosts(30, "a%02d."+apex)...)}
		now := t0.Add(time.Hour + time.Duration(k)*time.Minute)
		p.records = slices.Concat(base, waitingRecords)
		g, out := p.run(t, g, now)
		waitingRecords = append(waitingRecords, *out.Record)
		p.records = slices.Concat(base, waitingRecords)
		before := len(p.orders)
		_, out = p.run(t, g, now)
		if k == 0 {
			share = len(p.orders) - before
		}
		orderingRecords = append(orderingRecords, *out.Record)
	}
	alice := 0
	for _, r := range orderingRecords {
		alice += len(r.Orders)
	}
	if alice > 2*share {
		t.Errorf("ten staggered nested Gateways of alice ordered %d certificates; her share is %d, and the design bounds Gateways deciding before reading each other's records at one share over (%d)", alice, share, 2*share)
	}
	if n := p.mostInAWindow(letsEncrypt); n > letsEncrypt.Limit {
		t.Errorf("cert-manager ordered %d certificates within %s; the CA issues at most %d for example.org", n, letsEncrypt.Window, letsEncrypt.Limit)
	}
}

// Attacks the ledger resists, kept for what they add to the tests above.

func TestAttackDeleteOwnLedgerObject(t *testing.T) {
	// The record's Object lives in the owner's namespace, which a tenant
	// owning a nested Gateway has full rights in: alice deletes it every
	// other run and asks for ten new hostnames. Its ConfigMap stays (the
	// Object leaves out Delete while the record holds orders); Crossplane
	// makes the Object again, and until it is observed no order is
	// granted. alice orders no more than her share in the window.
	p := &platformRun{}
	in := owning("tenant-alice-n", "n.alice.example.org", v1alpha1.CertModeHTTP01)
	for i := range 30 {
		in.Routes = []Route{ownRoute(in.Namespace, "apps", hosts(10*(i+1), "h%03d.n.alice.example.org")...)}
		var out *Output
		in, out = p.run(t, in, t0.Add(time.Duration(i)*time.Hour))
		if out.Record != nil && len(out.Record.Orders) > 0 {
			for _, r := range out.Resources {
				if r.Key != KeyOrderLedger {
					continue
				}
				if mp := r.Object.(*kobjv1alpha1.Object).Spec.ManagementPolicies; len(mp) == 0 || slices.Contains(mp, xpv2.ManagementActionAll) || slices.Contains(mp, xpv2.ManagementActionDelete) {
					t.Fatalf("run %d: the record's Object holds orders but may delete its ConfigMap", i)
				}
			}
		}
		if i%2 == 1 {
			delete(in.Observed, KeyOrderLedger)
		}
	}
	if len(p.orders) == 0 {
		t.Fatal("alice ordered nothing: the attack is not exercised")
	}
	if n := p.mostInAWindow(letsEncrypt); n > letsEncrypt.Limit/2 {
		t.Errorf("deleting the record's Object every other run, alice ordered %d certificates within %s; her share alone is %d", n, letsEncrypt.Window, letsEncrypt.Limit/2)
	}
}

func TestAttackDNS01ClassFlipsReorderTheWildcard(t *testing.T) {
	// alice's nested Gateway is dns01 under the platform class; she flips
	// it to an edge class and back every hour (an edge Gateway composes
	// no Certificate, so each flip back composes the wildcard certificate
	// anew, a first certificate), adding a nested zone each time. Each
	// first certificate is her owner branch's order, which is alice's
	// branch of example.org: she orders no more than her share.
	p := &platformRun{}
	in := owning("tenant-alice", "alice.example.org", v1alpha1.CertModeDNS01)
	for i := range 60 {
		in.Spec.CertMode = v1alpha1.CertModeDNS01
		if i%2 == 1 {
			in.Spec.CertMode = v1alpha1.CertModeEdge
		}
		ns := fmt.Sprintf("tenant-alice-z%02d", i)
		apex := fmt.Sprintf("z%02d.alice.example.org", i)
		in.Namespaces = append(in.Namespaces, Namespace{Name: ns, Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-alice", kube.LabelNamespaceHost: apex}})
		r := ownRoute(ns, "www", "www."+apex)
		r.ParentRefs[0].Namespace = "tenant-alice"
		in.Routes = append(in.Routes, r)
		in.NamedNamespaces = nil
		in, _ = p.run(t, in, t0.Add(time.Duration(i)*time.Hour))
	}
	if len(p.orders) == 0 {
		t.Fatal("no wildcard certificate was ordered: the attack is not exercised")
	}
	if n := p.mostInAWindow(letsEncrypt); n > letsEncrypt.Limit/2 {
		t.Errorf("flipping her dns01 Gateway to edge and back, alice made cert-manager order %d certificates within %s; her branch's share alone is %d", n, letsEncrypt.Window, letsEncrypt.Limit/2)
	}
}

func TestAttackDeleteTheGatewayBeforeItsRecordIsWritten(t *testing.T) {
	// A run that grants orders composes the Certificates and the record
	// holding them at once: Crossplane applies both, and cert-manager
	// starts ordering while provider-kubernetes has yet to write the
	// record. alice flips her nested Tenant to gateway: false right after
	// each ordering run and back: the TenantGateway goes, its record's
	// Object with it (Orphan: the ConfigMap keeps what the provider last
	// wrote, which is the record before the orders), and the new
	// TenantGateway finds no order of its predecessor's last run. Each
	// cycle orders alice's share again.
	//
	// What must hold: the orders of that last run go unrecorded, but the
	// record the provider did write (the Gateway's demand, said before it
	// could order) is orphaned with the Object last applied holding
	// orders, and, older than the new Gateway's, keeps the branch's share
	// for that demand: the new Gateway orders nothing more.
	p := &platformRun{}
	in := nestedGateway(hosts(40, "h%02d.n.alice.example.org")...)
	self := writerOf(&in)
	for i := range 6 {
		now := t0.Add(time.Duration(i) * time.Hour)
		in, _ = p.run(t, in, now) // its record (waiting) is written
		landed := slices.Clone(p.records)
		in, _ = p.run(t, in, now.Add(time.Minute)) // orders
		// Deleted before provider-kubernetes wrote the record with them.
		for _, r := range landed {
			if r.Writer() == self {
				p.records = withRecord(p.records, self, &r)
			}
		}
		in = p.gone(in)
		self = writerOf(&in)
	}
	if n := p.mostInAWindow(letsEncrypt); n > letsEncrypt.Limit {
		t.Errorf("deleting her nested Gateway right after each ordering run, alice made cert-manager order %d certificates within %s (the ledger holds %d); the CA issues at most %d for example.org", n, letsEncrypt.Window, p.recordedOrders(), letsEncrypt.Limit)
	}
}

func TestAttackChargeAnotherBranch(t *testing.T) {
	// alice tries to make her orders bob's: routes of hers naming names in
	// bob's zone, a nested tenant whose host equals her own (a namespace
	// of no child apex of its own), and hostnames under her nested zones.
	// Every order of the root Gateway's record is charged to alice's
	// branch, none to bob's, and bob's one application still listens.
	p := &platformRun{}
	root := rootInput(http01Spec)
	root.Namespaces = append(root.Namespaces, labelled("tenant-alice-same", "alice.example.org"), labelled("tenant-alice-n", "n.alice.example.org"))
	root.Routes = []Route{
		routeTo("tenant-alice", "grab", hosts(20, "g%02d.bob.example.org")...),
		routeTo("tenant-alice-same", "same", hosts(20, "s%02d.alice.example.org")...),
		routeTo("tenant-alice-n", "nested", hosts(20, "n%02d.n.alice.example.org")...),
	}
	root, _ = p.ordered(t, root, t0)
	root.Routes = append(root.Routes, routeTo("tenant-bob", "shop", "shop.bob.example.org"))
	var out *Output
	root, out = p.run(t, root, t0.Add(time.Hour))
	byBranch := map[string]int{}
	for _, o := range out.Record.Orders {
		for _, b := range o.Branches {
			byBranch[b]++
		}
	}
	if byBranch["bob.example.org"] != 1 || len(byBranch) != 2 {
		t.Errorf("orders by branch %v, want alice's and bob's one", byBranch)
	}
	if got := hostnameStates(out)["shop.bob.example.org HTTPRoute/tenant-bob/shop"]; got != string(v1alpha1.HostnameListening) {
		t.Errorf("bob's application is %s, want Listening", got)
	}
}
