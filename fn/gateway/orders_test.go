package gateway

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// The ACME order budget, attacked: one tenant (a branch of the delegation
// tree) tries to spend the apex's weekly ACME limits, which every tenant
// shares. Each run feeds the last one's output back, an hour apart.

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

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

func TestAttackOrdersHTTP01Cycling(t *testing.T) {
	// alice's route names a new hostname every run, dropping the last:
	// each is a new Certificate, a new ACME order.
	bob := routeTo("tenant-bob", "shop", "shop.bob.example.org")
	out := runs(t, Input{Spec: http01Spec, Namespaces: platform()}, 14, func(i int, in *Input) {
		in.Routes = []Route{routeTo("tenant-alice", "cycle", fmt.Sprintf("h%02d.alice.example.org", i)), bob}
	})
	st := hostnameStates(out)
	if s := st["h13.alice.example.org HTTPRoute/tenant-alice/cycle"]; s != string(v1alpha1.HostnameWaiting) {
		t.Errorf("alice's 14th hostname in 14 hours is %s, want Waiting", s)
	}
	if s := st["shop.bob.example.org HTTPRoute/tenant-bob/shop"]; s != string(v1alpha1.HostnameListening) {
		t.Errorf("bob's hostname is %s, want Listening: alice's orders are her branch's", s)
	}
	var msg string
	for _, h := range out.Hostnames {
		if h.Hostname == "h13.alice.example.org" {
			msg = h.Message
		}
	}
	if want := "branch alice.example.org caused 10 orders in the last 168h0m0s, at most 10"; !strings.Contains(msg, want) || !strings.Contains(msg, "after 2026-12-08T00:00:00Z") {
		t.Errorf("message %q does not say who waits and until when (want %q and the time the first order leaves the window)", msg, want)
	}
	if n := len(out.Orders); n != 11 {
		t.Errorf("status.orders holds %d orders, want 11 (alice's 10, bob's 1)", n)
	}
}

func TestOrdersWindow(t *testing.T) {
	// alice asks for 12 hostnames at once: 10 are ordered, 2 wait; a week
	// after the first orders, the two are ordered. Served Certificates are
	// never ordered again.
	names := hosts(12, "h%02d.alice.example.org")
	in := Input{Spec: http01Spec, Namespaces: platform(), Routes: []Route{routeTo("tenant-alice", "many", names...)}, Now: t0}
	out := settled(t, &in)
	if n := count(viewOf(t, out).Hostnames, "Waiting"); n != 2 {
		t.Fatalf("%d hostnames wait, want 2: %v", n, viewOf(t, out).Hostnames)
	}
	if c := condition(out, ConditionListenersReady); c.Status || c.Reason != ReasonCertificateOrdersWaiting || !strings.Contains(c.Message, "2 hostnames or child apexes wait") {
		t.Errorf("ListenersReady %v %s %q, want False %s counting the 2", c.Status, c.Reason, c.Message, ReasonCertificateOrdersWaiting)
	}
	next := fedBack(in, out)
	next.Now = t0.Add(OrderWindow - time.Second)
	out = settled(t, &next)
	if n := count(viewOf(t, out).Hostnames, "Waiting"); n != 2 {
		t.Errorf("a second before the window ends, %d hostnames wait, want 2", n)
	}
	next = fedBack(next, out)
	next.Now = t0.Add(OrderWindow)
	out = settled(t, &next)
	if n := count(viewOf(t, out).Hostnames, "Listening"); n != 12 {
		t.Errorf("once the first orders left the window, %d hostnames listen, want 12", n)
	}
	if n := len(out.Orders); n != 2 {
		t.Errorf("status.orders holds %d, want the 2 new orders", n)
	}
}

func TestAttackOrdersDNS01NestedTenants(t *testing.T) {
	// alice creates a nested tenant with a route every run: each changes
	// the dns01 certificate's names, an order for the whole certificate.
	nss := platform()
	var routes []Route
	out := runs(t, Input{Spec: dns01Spec}, 13, func(i int, in *Input) {
		ns := fmt.Sprintf("tenant-alice-n%02d", i)
		nss = append(nss, labelled(ns, fmt.Sprintf("n%02d.alice.example.org", i)))
		routes = append(routes, routeTo(ns, "r", fmt.Sprintf("www.n%02d.alice.example.org", i)))
		in.Namespaces, in.Routes = nss, routes
		if i == 12 {
			// bob's first route arrives once alice's branch is spent.
			in.Routes = append(in.Routes, routeTo("tenant-bob", "shop", "shop.bob.example.org"))
		}
	})
	states := map[string]v1alpha1.ChildApexState{}
	for _, c := range out.ChildApexes {
		states[c.Apex] = c.State
	}
	if s := states["n12.alice.example.org"]; s != v1alpha1.ChildApexWaiting {
		t.Errorf("alice's 13th nested tenant is %s, want Waiting", s)
	}
	if s := states["bob.example.org"]; s != v1alpha1.ChildApexListening {
		t.Errorf("bob is %s, want Listening: alice's orders are her branch's", s)
	}
	// Deleting nested tenants is a change too: alice's removals wait,
	// and their names stay on the certificate.
	in := fedBack(Input{Spec: dns01Spec, Namespaces: nss, Routes: routes, Now: t0.Add(13 * time.Hour)}, out)
	in.Namespaces, in.Routes = platform(), nil
	out = settled(t, &in)
	cert := strings.Join(viewOf(t, out).Certificates, " ")
	if !strings.Contains(cert, "n00.alice.example.org") {
		t.Errorf("removing alice's nested tenants changed the certificate within her spent budget: %s", cert)
	}
}

func TestOrdersCountedOnce(t *testing.T) {
	// Crossplane has applied the last run's Certificates but not observed
	// them yet: the same orders are not charged again.
	in := Input{Spec: http01Spec, Namespaces: platform(), Routes: []Route{routeTo("tenant-alice", "a", "a.alice.example.org", "b.alice.example.org")}, Now: t0}
	out := settled(t, &in)
	next := fedBack(in, out)
	for k := range next.Observed {
		if k != KeyGateway {
			delete(next.Observed, k)
		}
	}
	next.Now = t0.Add(time.Minute)
	out = settled(t, &next)
	if n := len(out.Orders); n != 2 {
		t.Errorf("status.orders holds %d orders after two runs composed the same 2 Certificates, want 2: %v", n, out.Orders)
	}
}
