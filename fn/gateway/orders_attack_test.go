package gateway

import (
	"fmt"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// Attacks on the order ledger, written as the tenant: a provider behind,
// Certificate keys whose names change, nested Gateways deciding together or
// with no record above, deleted Gateways' demand and records, a replica
// ahead. Each counts the orders cert-manager makes from what is composed
// (platformRun), not from the ledger.

func rootInput(spec v1alpha1.TenantGatewaySpec) Input {
	return Input{Spec: spec, Namespaces: platform(), Name: "cozystack", Namespace: "tenant-root", UID: uid, CertManagerNamespace: "cozy-cert-manager", LedgerNamespace: "cozy-cert-manager", GatewayClass: someClass, Quota: letsEncrypt}
}

// platformGateway is the root tenant's Gateway serving the platform's
// dashboard: the record every ledger attack starts beside.
func platformGateway() Input {
	root := rootInput(http01Spec)
	root.Routes = []Route{routeTo("tenant-root", "dash", "dashboard.example.org")}
	return root
}

// nestedGateway is alice's nested tenant n, owning its Gateway in http01,
// with one route of hostnames.
func nestedGateway(hostnames ...string) Input {
	n := owning("tenant-alice-n", "n.alice.example.org", v1alpha1.CertModeHTTP01)
	n.Routes = []Route{ownRoute(n.Namespace, "apps", hostnames...)}
	return n
}

// ordered is run as a fresh TenantGateway reaches its first orders: its
// first run writes its record and orders nothing (no order is made before
// the record that holds it is written), the next orders.
func (p *platformRun) ordered(t *testing.T, in Input, now time.Time) (Input, *Output) {
	t.Helper()
	in, _ = p.run(t, in, now)
	return p.run(t, in, now)
}

// aDayHourly runs in, then each of others, once an hour for a day from
// from, as their TenantGateways reconcile on the same platform; it returns
// in and its last run's output.
func (p *platformRun) aDayHourly(t *testing.T, in Input, others []Input, from time.Time) (Input, *Output) {
	t.Helper()
	var out *Output
	for h := range 24 {
		now := from.Add(time.Duration(h) * time.Hour)
		in, out = p.run(t, in, now)
		for k := range others {
			others[k], _ = p.run(t, others[k], now)
		}
	}
	return in, out
}

func TestLedgerKeepsOrdersTheProviderHasNotWrittenYet(t *testing.T) {
	// provider-kubernetes writes a record some time after Crossplane
	// applies the Object; the Certificates the same run composed are
	// applied (and observed by the next run) at once. alice adds ten
	// hostnames every run while the provider is three runs behind: each
	// run reads its own record as it was, grants from that, and composes
	// a record without the orders the runs in between made.
	const lag = 3
	p := &platformRun{}
	in := rootInput(http01Spec)
	self := writerOf(&in)
	var landed []acme.OrderRecord
	var queue []*acme.OrderRecord
	granted := map[string]bool{}
	for i := range 24 {
		p.records = landed
		in.Routes = []Route{routeTo("tenant-alice", "apps", hosts(10*(i+1), "h%03d.alice.example.org")...)}
		var out *Output
		in, out = p.run(t, in, t0.Add(time.Duration(i)*time.Minute))
		for _, o := range out.Record.Orders {
			granted[o.Certificate+" "+o.Names] = true
		}
		have := map[string]bool{}
		for _, o := range out.Record.Orders {
			have[o.Certificate+" "+o.Names] = true
		}
		lost := 0
		for k := range granted {
			if !have[k] {
				lost++
			}
		}
		if lost > 0 && i == 23 {
			t.Errorf("after %d runs the record composed holds %d orders; %d orders earlier runs granted within the window are gone from it", i+1, len(out.Record.Orders), lost)
		}
		queue = append(queue, out.Record)
		if len(queue) > lag {
			landed = withRecord(landed, self, queue[0])
			queue = queue[1:]
		}
	}
	if n := p.mostInAWindow(letsEncrypt); n > letsEncrypt.Limit {
		t.Errorf("with provider-kubernetes %d runs behind, cert-manager ordered %d certificates within %s; the CA issues at most %d for example.org", lag, n, letsEncrypt.Window, letsEncrypt.Limit)
	}
}

// collidingHTTP01 are two hostnames in alice's zone with one first label
// whose SHA-256 share their first 32 bits: one short listener name, so one
// Certificate key (a birthday search over www.z<n>.alice.example.org).
var collidingHTTP01 = [2]string{"www.z29007.alice.example.org", "www.z66207.alice.example.org"}

func TestOrdersCountedWhenACertificateChangesNames(t *testing.T) {
	if HostKey(collidingHTTP01[0]) != HostKey(collidingHTTP01[1]) {
		t.Fatalf("the pair does not share a listener name: %s, %s", HostKey(collidingHTTP01[0]), HostKey(collidingHTTP01[1]))
	}
	// alice edits her route every hour, replacing one name of the pair by
	// the other: the new one takes the short name, so the observed
	// Certificate of that key is composed with another hostname, and
	// cert-manager issues it anew.
	p := &platformRun{}
	in := rootInput(http01Spec)
	for i := range 200 {
		in.Routes = []Route{routeTo("tenant-alice", "swap", collidingHTTP01[i%2])}
		in, _ = p.run(t, in, t0.Add(time.Duration(i)*time.Hour))
	}
	if n := p.mostInAWindow(letsEncrypt); n > letsEncrypt.Limit {
		t.Errorf("swapping two hostnames of one listener name made cert-manager order %d certificates within %s; the CA issues at most %d for example.org", n, letsEncrypt.Window, letsEncrypt.Limit)
	}
}

func TestOrdersShareFairlyWithoutARecordAbove(t *testing.T) {
	// The platform's own Gateway has ordered nothing (an edge class by
	// default, or a fresh platform): no record names example.org. alice
	// owns a Gateway and gives each of 60 nested tenants (gateway: false)
	// one application; bob owns a Gateway and asks for ten.
	p := &platformRun{}
	alice := owning("tenant-alice", "alice.example.org", v1alpha1.CertModeHTTP01)
	var routes []Route
	for k := range 60 {
		ns := fmt.Sprintf("tenant-alice-x%02d", k)
		apex := fmt.Sprintf("x%02d.alice.example.org", k)
		alice.Namespaces = append(alice.Namespaces, Namespace{Name: ns, Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-alice", kube.LabelNamespaceHost: apex}})
		r := ownRoute(ns, "app", "www."+apex)
		r.ParentRefs[0].Namespace = "tenant-alice"
		routes = append(routes, r)
	}
	alice.Routes = routes
	bob := owning("tenant-bob", "bob.example.org", v1alpha1.CertModeHTTP01)
	bob.Routes = []Route{ownRoute("tenant-bob", "apps", hosts(10, "app%d.bob.example.org")...)}
	alice, _ = p.ordered(t, alice, t0)
	var out *Output
	bob, out = p.ordered(t, bob, t0.Add(time.Hour))
	if n := count(viewOf(t, out).Hostnames, "Listening"); n != 10 {
		t.Errorf("bob, one of two tenants asking, gets %d of his 10 applications this week; alice's nested tenants, each a branch of the whole domain, took %d orders", n, len(p.orders)-n)
	}
}

func TestOrdersBoundedWhenNestedGatewaysDecideTogether(t *testing.T) {
	// The platform's Gateway has a record. alice flips ten nested Tenants
	// to gateway: true at once, each namespace already holding thirty
	// applications: the ten new TenantGateways run before provider-kubernetes
	// writes any of their records, each reading the same ledger.
	p := &platformRun{}
	p.run(t, platformGateway(), t0)
	snapshot := p.records
	var gws []Input
	for k := range 10 {
		ns := fmt.Sprintf("tenant-alice-n%d", k)
		apex := fmt.Sprintf("n%d.alice.example.org", k)
		g := owning(ns, apex, v1alpha1.CertModeHTTP01)
		g.Routes = []Route{ownRoute(ns, "apps", hosts(30, "a%02d."+apex)...)}
		gws = append(gws, g)
	}
	// Each reads the same ledger: first to write its record, then, once
	// all ten are written, to order, all from that one reading.
	for range 2 {
		written := snapshot
		for k := range gws {
			p.records = snapshot
			var out *Output
			gws[k], out = p.run(t, gws[k], t0.Add(time.Hour))
			written = withRecord(written, writerOf(&gws[k]), out.Record)
		}
		snapshot = written
	}
	if n := p.mostInAWindow(letsEncrypt); n > letsEncrypt.Limit {
		t.Errorf("ten nested Gateways deciding from one reading of the ledger made cert-manager order %d certificates within %s; the CA issues at most %d for example.org", n, letsEncrypt.Window, letsEncrypt.Limit)
	}
}

func TestDeletedGatewaysLeaveNoDemand(t *testing.T) {
	// alice's nested Gateway n asks for a hundred applications, orders its
	// share and deletes itself: its record stays (it holds orders), with
	// what it waited for. Eight days later, when its orders have left the
	// window, bob asks for forty on the platform's Gateway: he is alone
	// but for a newcomer, so he gets half the quota.
	p := &platformRun{}
	root := platformGateway()
	root, _ = p.ordered(t, root, t0)
	n := nestedGateway(hosts(100, "a%02d.n.alice.example.org")...)
	_, out := p.ordered(t, n, t0.Add(time.Hour))
	if len(out.Record.Waiting) == 0 {
		t.Fatalf("n waits for nothing: %+v", out.Record)
	}
	// n is deleted: its Object goes, its record is orphaned.
	later := t0.Add(8 * 24 * time.Hour)
	root.Routes = append(root.Routes, routeTo("tenant-bob", "apps", hosts(40, "b%02d.bob.example.org")...))
	root, out = p.run(t, root, later)
	got := 0
	for _, h := range out.Hostnames {
		if h.Route == "HTTPRoute/tenant-bob/apps" && h.State == v1alpha1.HostnameListening {
			got++
		}
	}
	if got != 25 {
		var orphan map[string]int
		for _, r := range p.records {
			if r.TenantGateway == "tenant-alice-n/cozystack" {
				orphan = r.Waiting
			}
		}
		t.Errorf("bob gets %d of 40 applications, want 25 (half the quota, the rest a newcomer's): the deleted Gateway's record still waits for %v", got, orphan)
	}
}

func TestOrphanedRecordsBounded(t *testing.T) {
	// alice creates a nested Gateway, orders one certificate and deletes
	// it, with a new name each time. Once their orders left the window,
	// nothing keeps their records: the ledger read by every TenantGateway
	// of the domain does not grow with every Gateway ever made.
	p := &platformRun{}
	for k := range 100 {
		ns := fmt.Sprintf("tenant-alice-g%03d", k)
		apex := fmt.Sprintf("g%03d.alice.example.org", k)
		g := owning(ns, apex, v1alpha1.CertModeHTTP01)
		g.Routes = []Route{ownRoute(ns, "app", "www."+apex)}
		p.ordered(t, g, t0.Add(time.Duration(k)*24*time.Hour))
	}
	live := 0
	for _, r := range p.records {
		for _, o := range r.Orders {
			if o.At.Add(letsEncrypt.Window).After(t0.Add(100 * 24 * time.Hour)) {
				live++
				break
			}
		}
	}
	if len(p.records) > live+1 {
		t.Errorf("the ledger holds %d records of deleted Gateways, %d with an order in the window: every TenantGateway of example.org reads them all on every run, and nothing ever removes them", len(p.records), live)
	}
}

func TestLedgerKeepsOrdersOfAReplicaAhead(t *testing.T) {
	// Two replicas of the function, one a couple of seconds ahead of the
	// other (or a second boundary between two runs): the later run reads
	// an order dated after its own clock and composes the record without
	// it.
	ahead := acme.OrderRecord{RegisteredDomain: "example.org", TenantGateway: "tenant-root/cozystack", UID: uid, Apex: "example.org",
		Orders: []acme.LedgerOrder{{Branches: []string{"alice.example.org"}, Certificate: "certificate-https-a-00000000", Names: "x", At: metav1.NewTime(t0.Add(2 * time.Second))}}}
	l := newLedger(&Input{Spec: http01Spec, Namespace: "tenant-root", Name: "cozystack", UID: uid, Quota: letsEncrypt, Now: t0, Ledger: []acme.OrderRecord{ahead}})
	if n := len(l.Record().Orders); n != 1 {
		t.Errorf("the record composed holds %d orders, want the one a replica ahead wrote", n)
	}
}

func TestDeletedGatewaysLeaveNoDemandWithoutARecordAbove(t *testing.T) {
	// No record names example.org (the platform's Gateway ordered
	// nothing). alice makes two nested Gateways, each giving 100 nested
	// tenants of its own two applications; they order what they may and
	// are deleted: their records keep 64 branches waiting each, forever.
	// A month later bob, on a Gateway of his own, asks for ten
	// applications, and nobody else asks for anything.
	p := &platformRun{}
	for _, g := range []string{"n", "o"} {
		ns, apex := "tenant-alice-"+g, g+".alice.example.org"
		n := owning(ns, apex, v1alpha1.CertModeHTTP01)
		for k := range 100 {
			cns := fmt.Sprintf("%s-m%02d", ns, k)
			capex := fmt.Sprintf("m%02d.%s", k, apex)
			n.Namespaces = append(n.Namespaces, Namespace{Name: cns, Labels: map[string]string{kube.LabelNamespaceGateway: ns, kube.LabelNamespaceHost: capex}})
			r := ownRoute(cns, "app", "a."+capex, "b."+capex)
			r.ParentRefs[0].Namespace = ns
			n.Routes = append(n.Routes, r)
		}
		p.ordered(t, n, t0)
	}
	waiting := 0
	for _, r := range p.records {
		waiting += len(r.Waiting)
	}
	bob := owning("tenant-bob", "bob.example.org", v1alpha1.CertModeHTTP01)
	bob.Routes = []Route{ownRoute("tenant-bob", "apps", hosts(10, "app%d.bob.example.org")...)}
	_, out := p.ordered(t, bob, t0.Add(30*24*time.Hour))
	if got := count(viewOf(t, out).Hostnames, "Listening"); got != 10 {
		t.Errorf("a month after alice deleted her Gateways, bob gets %d of his 10 applications this week: their records still wait for %d branches", got, waiting)
	}
}

func TestOrdersWaitWhileTheRecordIsRefused(t *testing.T) {
	// alice flips a nested Tenant to gateway: false and back: the new
	// TenantGateway runs while its predecessor's Object is still being
	// deleted (provider-kubernetes' finalizer), so the guard refuses the
	// record's Object; the Certificates are composed all the same. Their
	// orders are in no record the cluster will hold.
	in := nestedGateway(hosts(20, "a%02d.n.alice.example.org")...)
	in.Now = t0
	in.NamedNamespaces = map[string]*Namespace{"tenant-alice-n": &in.Namespaces[0]}
	out, err := Compose(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Probes = map[string]Probe{}
	for _, pr := range out.Probes {
		in.Probes[pr.Key] = Probe{}
	}
	in.Probes[KeyOrderLedger] = Probe{Exists: true, ControllerUID: "uid-of-the-deleted-one"}
	if out, err = Compose(in); err != nil {
		t.Fatal(err)
	}
	recorded := false
	certs := 0
	for _, r := range out.Resources {
		if r.Key == KeyOrderLedger {
			recorded = true
		}
		if _, ok := r.Object.(*cmv1.Certificate); ok {
			certs++
		}
	}
	if !recorded && certs > 0 {
		t.Errorf("the record's Object is refused, yet %d Certificates are composed: their orders are recorded nowhere", certs)
	}
}
