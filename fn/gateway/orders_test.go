package gateway

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	kobjv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/object/v1alpha1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/conditions"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// The ACME order ledger, attacked: a tenant with full rights in its own
// namespaces and its nested Tenants (a Gateway of its own, a class it
// selects) tries to make the platform order more certificates than the CA
// allows for the registered domain. The orders are counted here as
// cert-manager makes them, from what the function composes, not from the
// function's own ledger.

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// letsEncrypt is the quota the platform settings default to for the
// letsencrypt-* issuers.
var letsEncrypt = acme.LetsEncryptQuota

// settled is attackP as Crossplane runs it: once more with the look-ups the
// first call asked for answered (nothing found at those names).
func settled(t *testing.T, in *Input) *Output {
	t.Helper()
	out := attackP(t, in)
	if len(out.Probes) == 0 {
		return out
	}
	in.Probes = map[string]Probe{}
	for _, p := range out.Probes {
		in.Probes[p.Key] = Probe{}
	}
	return attackP(t, in)
}

// ordered is settled as a fresh TenantGateway reaches its first orders: its
// first run writes its record of the ledger and orders nothing, the next,
// once provider-kubernetes wrote the record, orders. in becomes the input
// of that second run.
func ordered(t *testing.T, in *Input) *Output {
	t.Helper()
	next := fedBack(*in, settled(t, in))
	next.Probes = nil
	*in = next
	return settled(t, in)
}

// runs composes in once per step, feeding each output back, with the clock
// an hour later each run; step changes the input before each run.
func runs(t *testing.T, in Input, n int, step func(i int, in *Input)) *Output {
	t.Helper()
	var out *Output
	for i := range n {
		in.Now = t0.Add(time.Duration(i) * time.Hour)
		step(i, &in)
		out = settled(t, &in)
		in = fedBack(in, out)
		in.Probes = nil
	}
	return out
}

// A platform is TenantGateways of one registered domain sharing the
// ledger's records, as the cluster holds them, and the orders cert-manager
// made: one for each Certificate composed that did not exist with the same
// names before.
type platformRun struct {
	records []acme.OrderRecord
	// certs are each TenantGateway's Certificates as they exist, by key.
	certs  map[string]map[string][]string
	orders []time.Time
	// orphans are the writers whose record's Object was last applied
	// holding orders, so without the Delete policy.
	orphans map[string]bool
}

// owning is a TenantGateway of its own in namespace ns (a tenant's nested
// Tenant with gateway: true) for apex, in mode.
func owning(ns, apex string, mode v1alpha1.CertMode) Input {
	spec := v1alpha1.TenantGatewaySpec{Apex: apex, CertMode: mode}
	if mode == v1alpha1.CertModeDNS01 {
		spec.DNS01 = dns01Spec.DNS01
	}
	return Input{Spec: spec, Name: "cozystack", Namespace: ns, UID: "uid-" + ns, CertManagerNamespace: "cozy-cert-manager", LedgerNamespace: "cozy-cert-manager", GatewayClass: someClass, Quota: letsEncrypt,
		Namespaces: []Namespace{{Name: ns, Labels: map[string]string{kube.LabelNamespaceGateway: ns, kube.LabelNamespaceHost: apex}}}}
}

// ownRoute is a route of the owner's namespace on its own Gateway.
func ownRoute(ns, name string, hosts ...string) Route {
	return Route{Kind: KindHTTPRoute, Namespace: ns, Name: name, ParentRefs: []ParentRef{{Name: "cozystack"}}, Hostnames: hosts}
}

// run composes in at now against the shared records (with the probes
// answered, as Crossplane does), counts cert-manager's orders, stores its
// record and returns the input of its next run.
func (p *platformRun) run(t *testing.T, in Input, now time.Time) (Input, *Output) {
	t.Helper()
	in.Now, in.Ledger, in.Probes = now, slices.Clone(p.records), nil
	if in.NamedNamespaces == nil {
		in.NamedNamespaces = map[string]*Namespace{}
		for i := range in.Namespaces {
			in.NamedNamespaces[in.Namespaces[i].Name] = &in.Namespaces[i]
		}
	}
	out, err := Compose(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Probes) > 0 {
		in.Probes = map[string]Probe{}
		for _, pr := range out.Probes {
			in.Probes[pr.Key] = Probe{}
		}
		if out, err = Compose(in); err != nil {
			t.Fatal(err)
		}
	}
	self := in.Namespace + "/" + in.Name
	if p.certs == nil {
		p.certs = map[string]map[string][]string{}
	}
	now2 := map[string][]string{}
	for _, r := range out.Resources {
		if c, ok := r.Object.(*cmv1.Certificate); ok {
			now2[r.Key] = c.Spec.DNSNames
			if old, ok := p.certs[self][r.Key]; !ok || !slices.Equal(old, c.Spec.DNSNames) {
				p.orders = append(p.orders, now)
			}
		}
	}
	p.certs[self] = now2
	p.records = withRecord(p.records, writerOf(&in), out.Record)
	if p.orphans == nil {
		p.orphans = map[string]bool{}
	}
	p.orphans[writerOf(&in)] = out.Record != nil && len(out.Record.Orders) > 0
	for _, r := range out.Resources {
		if strings.HasPrefix(r.Key, KeyOrderLedgerReapPrefix) {
			// The Object goes with the next run (or with its
			// TenantGateway), and the record with it.
			var cm corev1.ConfigMap
			m := jsonobj.Content(r.Object.(*kobjv1alpha1.Object).Spec.ForProvider.Manifest)
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &cm); err != nil {
				t.Fatal(err)
			}
			rec, err := DecodeLedgerRecord(cm.Data)
			if err != nil {
				t.Fatal(err)
			}
			p.records = withRecord(p.records, rec.Writer(), nil)
		}
	}
	next := fedBack(in, out)
	next.Ledger = nil
	return next, out
}

// gone is the TenantGateway of in deleted: what it composed goes, but for
// its record (orphaned while it holds orders), and it comes back with an
// empty status.
func (p *platformRun) gone(in Input) Input {
	delete(p.certs, in.Namespace+"/"+in.Name)
	// Its record goes with its Object, unless the Object was last applied
	// holding orders (no Delete policy then), whatever the ConfigMap holds.
	p.records = slices.DeleteFunc(p.records, func(r acme.OrderRecord) bool { return r.Writer() == writerOf(&in) && !p.orphans[writerOf(&in)] })
	in.Observed, in.Previous = nil, PreviousStatus{}
	in.UID += "-again"
	return in
}

// mostInAWindow is the most orders cert-manager made within any window of
// the quota.
func (p *platformRun) mostInAWindow(q acme.OrderQuota) int {
	most := 0
	for i, a := range p.orders {
		n := 0
		for _, b := range p.orders[i:] {
			if b.Sub(a) < q.Window {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func TestOrdersBoundedAcrossClassFlips(t *testing.T) {
	// alice owns a Gateway through a nested Tenant, with a nested tenant
	// z of her own, and flips its class between an edge class and the
	// platform's every hour, asking each time for a new hostname in z's
	// zone from her own namespace: an edge Gateway gives each such name a
	// pin of its own and composes no Certificate, and every flip back
	// composes every Certificate again.
	p := &platformRun{}
	in := owning("tenant-alice", "alice.example.org", v1alpha1.CertModeHTTP01)
	in.Namespaces = append(in.Namespaces, Namespace{Name: "tenant-alice-z", Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-alice", kube.LabelNamespaceHost: "z.alice.example.org"}})
	var names []string
	for i := range 200 {
		names = append(names, fmt.Sprintf("h%03d.z.alice.example.org", i))
		in.Spec.CertMode = v1alpha1.CertModeHTTP01
		if i%2 == 1 {
			in.Spec.CertMode = v1alpha1.CertModeEdge
		}
		zr := ownRoute("tenant-alice-z", "www", "www.z.alice.example.org")
		zr.ParentRefs[0].Namespace = "tenant-alice"
		in.Routes = []Route{ownRoute("tenant-alice", "cycle", names...), zr}
		in, _ = p.run(t, in, t0.Add(time.Duration(i)*time.Hour))
	}
	if n := p.mostInAWindow(letsEncrypt); n > letsEncrypt.Limit {
		t.Errorf("flipping classes made cert-manager order %d certificates within %s; the CA issues at most %d for example.org", n, letsEncrypt.Window, letsEncrypt.Limit)
	}
}

func TestOrdersBoundedAcrossNestedGateways(t *testing.T) {
	// alice owns a Gateway, and so does each of her nested tenants; each
	// asks for new hostnames every hour, and every few hours she deletes
	// her Gateway and makes it again. bob, on the platform's Gateway,
	// asks for five applications.
	p := &platformRun{}
	root := Input{Spec: http01Spec, Namespaces: platform(), Name: "cozystack", Namespace: "tenant-root", UID: uid, CertManagerNamespace: "cozy-cert-manager", LedgerNamespace: "cozy-cert-manager", GatewayClass: someClass, Quota: letsEncrypt}
	gws := []Input{owning("tenant-alice", "alice.example.org", v1alpha1.CertModeHTTP01)}
	for k := range 6 {
		ns := fmt.Sprintf("tenant-alice-n%d", k)
		gws = append(gws, owning(ns, fmt.Sprintf("n%d.alice.example.org", k), v1alpha1.CertModeHTTP01))
	}
	var out *Output
	for i := range 60 {
		now := t0.Add(time.Duration(i) * time.Hour)
		for g := range gws {
			if i%10 == 9 {
				gws[g] = p.gone(gws[g])
			}
			apex := gws[g].Spec.Apex
			gws[g].Routes = []Route{ownRoute(gws[g].Namespace, "r", hosts(i+1, "h%02d."+apex)...)}
		}
		for g := range gws {
			gws[g], _ = p.run(t, gws[g], now)
		}
		if i == 30 {
			root.Routes = []Route{routeTo("tenant-bob", "apps", hosts(5, "app%d.bob.example.org")...)}
		}
		root, out = p.run(t, root, now)
	}
	if n := p.mostInAWindow(letsEncrypt); n > letsEncrypt.Limit {
		t.Errorf("alice's nested Gateways made cert-manager order %d certificates within %s; the CA issues at most %d for example.org", n, letsEncrypt.Window, letsEncrypt.Limit)
	}
	want := map[string]string{}
	for i := range 5 {
		want[fmt.Sprintf("app%d.bob.example.org HTTPRoute/tenant-bob/apps", i)] = string(v1alpha1.HostnameListening)
	}
	if diff := cmp.Diff(want, hostnameStates(out)); diff != "" {
		t.Errorf("bob's five applications, once alice's Gateways asked for hundreds (-want +got):\n%s", diff)
	}
}

// colliding are two nested zones of alice's whose dns01 certificates'
// name sets share the first 32 bits of their SHA-256 (a birthday search
// over x<n>.alice.example.org, found in milliseconds).
var colliding = [2]string{"x3877.alice.example.org", "x72244.alice.example.org"}

func TestOrdersKeyedByFullNameSets(t *testing.T) {
	names := func(z string) []string {
		return []string{"example.org", "*.example.org", "alice.example.org", "*.alice.example.org", z, "*." + z}
	}
	if a, b := Hex8(strings.Join(names(colliding[0]), ",")), Hex8(strings.Join(names(colliding[1]), ",")); a != b {
		t.Fatalf("the pair does not collide in 32 bits: %s, %s", a, b)
	}
	// alice swaps her nested tenant's zone between the two every hour:
	// each swap changes the wildcard certificate every tenant of the
	// Gateway is served with.
	p := &platformRun{}
	in := Input{Spec: dns01Spec, Name: "cozystack", Namespace: "tenant-root", UID: uid, CertManagerNamespace: "cozy-cert-manager", LedgerNamespace: "cozy-cert-manager", GatewayClass: someClass, Quota: letsEncrypt}
	for i := range 120 {
		z := colliding[i%2]
		in.Namespaces = append(slices.Clone(platform()[:2]), labelled("tenant-alice-x", z))
		in.NamedNamespaces = nil
		in.Routes = []Route{routeTo("tenant-alice-x", "r", "www."+z), routeTo("tenant-alice", "www", "www.alice.example.org")}
		in, _ = p.run(t, in, t0.Add(time.Duration(i)*time.Hour))
	}
	if n := p.mostInAWindow(letsEncrypt); n > letsEncrypt.Limit {
		t.Errorf("swapping two name sets that collide in 32 bits made cert-manager order %d certificates within %s; the CA issues at most %d for example.org", n, letsEncrypt.Window, letsEncrypt.Limit)
	}
}

func TestTwentyApplicationsInTheFirstWeek(t *testing.T) {
	// A tenant on a fresh platform with Let's Encrypt's limits publishes
	// twenty applications at once in http01: every one gets its
	// certificate.
	in := Input{Spec: http01Spec, Namespaces: platform(), Quota: letsEncrypt, Now: t0, LedgerNamespace: "cozy-cert-manager",
		Routes: []Route{routeTo("tenant-alice", "apps", hosts(20, "app%02d.alice.example.org")...)}}
	out := ordered(t, &in)
	if got := count(viewOf(t, out).Hostnames, "Listening"); got != 20 {
		t.Errorf("%d of 20 applications listen once the record is written: %v", got, viewOf(t, out).Hostnames)
	}
}

func TestOrdersShareFairly(t *testing.T) {
	// alice asks for forty hostnames, bob for five, at once: bob's
	// five fit his share, alice uses what is left but for one newcomer's
	// share, and nobody passes the quota.
	in := Input{Spec: http01Spec, Namespaces: platform(), Quota: letsEncrypt, Now: t0, LedgerNamespace: "cozy-cert-manager", Routes: []Route{
		routeTo("tenant-alice", "many", hosts(40, "h%02d.alice.example.org")...),
		routeTo("tenant-bob", "few", hosts(5, "b%d.bob.example.org")...),
	}}
	out := ordered(t, &in)
	got := map[string]int{}
	for _, h := range out.Hostnames {
		got[h.Route+" "+string(h.State)]++
	}
	want := map[string]int{
		"HTTPRoute/tenant-alice/many Listening": 22, "HTTPRoute/tenant-alice/many Waiting": 18,
		"HTTPRoute/tenant-bob/few Listening": 5,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hostnames by route and state (-want +got):\n%s", diff)
	}
	var msg string
	for _, h := range out.Hostnames {
		if h.State == v1alpha1.HostnameWaiting {
			msg = h.Message
			break
		}
	}
	for _, w := range []string{"at most 50 certificates for example.org in 168h0m0s", "branch alice.example.org has ordered 22 of its share of 22", "after 2026-12-08T00:00:00Z"} {
		if !strings.Contains(msg, w) {
			t.Errorf("the waiting message %q does not say %q", msg, w)
		}
	}
}

func TestOrdersWindow(t *testing.T) {
	// alice asks for 30 hostnames at once: her share is ordered, the rest
	// waits; a week after the first orders, the rest is ordered. Served
	// Certificates are never ordered again.
	names := hosts(30, "h%02d.alice.example.org")
	in := Input{Spec: http01Spec, Namespaces: platform(), Routes: []Route{routeTo("tenant-alice", "many", names...)}, Now: t0, Quota: letsEncrypt, LedgerNamespace: "cozy-cert-manager"}
	out := ordered(t, &in)
	if n := count(viewOf(t, out).Hostnames, "Waiting"); n != 5 {
		t.Fatalf("%d hostnames wait, want 5: %v", n, viewOf(t, out).Hostnames)
	}
	if c := condition(out, conditions.ListenersReady); c.Status || c.Reason != conditions.ReasonCertificateOrdersWaiting || !strings.Contains(c.Message, "5 hostnames or child apexes wait") {
		t.Errorf("ListenersReady %v %s %q, want False %s counting the 5", c.Status, c.Reason, c.Message, conditions.ReasonCertificateOrdersWaiting)
	}
	next := fedBack(in, out)
	next.Now = t0.Add(letsEncrypt.Window - time.Second)
	out = settled(t, &next)
	if n := count(viewOf(t, out).Hostnames, "Waiting"); n != 5 {
		t.Errorf("a second before the window ends, %d hostnames wait, want 5", n)
	}
	next = fedBack(next, out)
	next.Now = t0.Add(letsEncrypt.Window)
	out = settled(t, &next)
	if n := count(viewOf(t, out).Hostnames, "Listening"); n != 30 {
		t.Errorf("once the first orders left the window, %d hostnames listen, want 30", n)
	}
	if n := len(out.Record.Orders); n != 5 {
		t.Errorf("the record holds %d orders, want the 5 new ones", n)
	}
}

func TestOrdersCountedOnce(t *testing.T) {
	// Crossplane has applied the last run's Certificates but not observed
	// them yet: the same orders are not charged again. Once observed and
	// gone, the same hostname is a new order.
	in := Input{Spec: http01Spec, Namespaces: platform(), Routes: []Route{routeTo("tenant-alice", "a", "a.alice.example.org", "b.alice.example.org")}, Now: t0, Quota: letsEncrypt, LedgerNamespace: "cozy-cert-manager"}
	out := ordered(t, &in)
	next := fedBack(in, out)
	for k := range next.Observed {
		if k != KeyGateway {
			delete(next.Observed, k)
		}
	}
	next.Now = t0.Add(time.Minute)
	out = settled(t, &next)
	if n := len(out.Record.Orders); n != 2 {
		t.Errorf("the record holds %d orders after two runs composed the same 2 Certificates, want 2: %v", n, out.Record.Orders)
	}
	next = fedBack(next, out)
	next.Now = t0.Add(2 * time.Minute)
	out = settled(t, &next) // observed: seen
	next = fedBack(next, out)
	next.Routes = nil
	next.Now = t0.Add(3 * time.Minute)
	out = settled(t, &next) // gone
	next = fedBack(next, out)
	next.Routes = in.Routes
	next.Now = t0.Add(4 * time.Minute)
	out = settled(t, &next)
	if n := len(out.Record.Orders); n != 4 {
		t.Errorf("the record holds %d orders once both hostnames left and came back, want 4", n)
	}
}

func TestAttackOrdersDNS01NestedTenants(t *testing.T) {
	// alice creates a nested tenant with a route every run: each changes
	// the dns01 certificate's names, an order for the whole certificate.
	// Her share runs out; bob's first zone still gets his.
	nss := platform()
	var routes []Route
	out := runs(t, Input{Spec: dns01Spec, Quota: letsEncrypt, LedgerNamespace: "cozy-cert-manager"}, 40, func(i int, in *Input) {
		ns := fmt.Sprintf("tenant-alice-n%02d", i)
		nss = append(nss, labelled(ns, fmt.Sprintf("n%02d.alice.example.org", i)))
		routes = append(routes, routeTo(ns, "r", fmt.Sprintf("www.n%02d.alice.example.org", i)))
		in.Namespaces, in.Routes = nss, routes
		if i == 39 {
			in.Routes = append(in.Routes, routeTo("tenant-bob", "shop", "shop.bob.example.org"))
		}
	})
	states := map[string]v1alpha1.ChildApexState{}
	for _, c := range out.ChildApexes {
		states[c.Apex] = c.State
	}
	if s := states["n39.alice.example.org"]; s != v1alpha1.ChildApexWaiting {
		t.Errorf("alice's 40th nested tenant in 40 hours is %s, want Waiting", s)
	}
	if s := states["bob.example.org"]; s != v1alpha1.ChildApexListening {
		t.Errorf("bob is %s, want Listening: alice's orders are her branch's", s)
	}
}

func TestGoneZonesGiveTheirPlacesUp(t *testing.T) {
	// alice fills the dns01 certificate with nested tenants and spends her
	// share swapping one of them every hour, then deletes them all. Giving their names up waits for no order;
	// carol's first zone takes a place at once, with her own order, and
	// the certificate never asks for more than the CA issues.
	nss := platform()
	var routes []Route
	zone := func(i int) {
		ns := fmt.Sprintf("tenant-alice-n%02d", i)
		nss = append(nss, labelled(ns, fmt.Sprintf("n%02d.alice.example.org", i)))
		routes = append(routes, routeTo(ns, "r", fmt.Sprintf("www.n%02d.alice.example.org", i)))
	}
	in := Input{Spec: dns01Spec, Quota: letsEncrypt, LedgerNamespace: "cozy-cert-manager"}
	out := runs(t, in, 30, func(i int, in *Input) {
		if i == 0 {
			for k := range 48 {
				zone(k)
			}
		} else {
			// One zone for another: an order each.
			nss, routes = nss[:len(nss)-1], routes[:len(routes)-1]
			zone(100 + i)
		}
		in.Namespaces, in.Routes = nss, routes
	})
	if n := len(wildcardCertificateNames(out)); n < maxCertificateDNSNames-2 {
		t.Fatalf("alice's zones fill %d names, want the certificate full but for the zone that waits", n)
	}
	in = fedBack(Input{Spec: dns01Spec, Quota: letsEncrypt, LedgerNamespace: "cozy-cert-manager", Namespaces: nss, Routes: routes, Now: t0.Add(30 * time.Hour)}, out)
	in.Ledger = []acme.OrderRecord{*out.Record}
	in.Namespaces = append(platform(), labelled("tenant-carol", "carol.example.org"))
	in.Routes = []Route{routeTo("tenant-carol", "shop", "shop.carol.example.org")}
	out = settled(t, &in)
	got := map[string]v1alpha1.ChildApexState{}
	for _, c := range out.ChildApexes {
		got[c.Apex] = c.State
	}
	want := map[string]v1alpha1.ChildApexState{"alice.example.org": v1alpha1.ChildApexIdle, "bob.example.org": v1alpha1.ChildApexIdle, "carol.example.org": v1alpha1.ChildApexListening}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("child apexes once alice deleted her nested tenants and carol came (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"example.org", "*.example.org", "carol.example.org", "*.carol.example.org"}, wildcardCertificateNames(out)); diff != "" {
		t.Errorf("the certificate with carol's first zone (-want +got):\n%s", diff)
	}
}

func TestOrderRecordBounded(t *testing.T) {
	// Whatever a TenantGateway orders, its record keeps at most the
	// largest quota's orders and waiting branches.
	in := Input{Spec: http01Spec, Namespaces: platform(), Quota: acme.OrderQuota{Limit: acme.MaxOrderQuota, Window: time.Hour}, Now: t0, LedgerNamespace: "cozy-cert-manager",
		Routes: []Route{routeTo("tenant-alice", "many", hosts(60, "h%02d.alice.example.org")...)}}
	out := ordered(t, &in)
	old := *out.Record
	for i := range 2 * acme.MaxOrderQuota {
		old.Orders = append(old.Orders, acme.LedgerOrder{Branches: []string{"x"}, Certificate: fmt.Sprint(i), At: out.Record.Orders[0].At})
	}
	l := newLedger(&Input{Spec: http01Spec, Namespace: "tenant-root", Name: "cozystack", UID: old.UID, Quota: in.Quota, Now: t0, Ledger: []acme.OrderRecord{old}})
	if n := len(l.Record().Orders); n > acme.MaxOrderQuota {
		t.Errorf("the record holds %d orders, want at most %d", n, acme.MaxOrderQuota)
	}
	if got := slices.Sorted(maps.Keys(out.Record.Waiting)); len(got) > maxWaitingBranches {
		t.Errorf("%d waiting branches", len(got))
	}
}

func TestMaxMin(t *testing.T) {
	for name, tc := range map[string]struct {
		capacity int
		demand   map[string]int
		want     map[string]int
	}{
		"alone with a newcomer's share": {50, map[string]int{"a": 20, "": 50}, map[string]int{"a": 20, "": 30}},
		"small demands met whole":       {50, map[string]int{"a": 100, "b": 5, "": 50}, map[string]int{"a": 23, "b": 5, "": 22}},
		"equal shares":                  {10, map[string]int{"a": 10, "b": 10, "c": 10}, map[string]int{"a": 3, "b": 3, "c": 4}},
		"no capacity":                   {0, map[string]int{"a": 1}, map[string]int{"a": 0}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, maxMin(tc.capacity, tc.demand)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
