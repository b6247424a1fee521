package gateway

import (
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/google/go-cmp/cmp"

	kobjv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/object/v1alpha1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/conditions"
)

// TestFirstWildcardCertificateWaits: until the first dns01 certificate is
// ordered (its record written, its branch's share not spent), the names of
// a child zone wait with it (the zone has no listener yet), the apex's
// names say their certificate waits, and ListenersReady names the wait;
// once ordered, every name is served.
func TestFirstWildcardCertificateWaits(t *testing.T) {
	in := rootInput(dns01Spec)
	in.Now = t0
	in.Routes = []Route{
		routeTo("tenant-root", "www", "www.example.org"),
		routeTo("tenant-alice", "app", "app.alice.example.org"),
	}
	certificates := func(out *Output) int {
		n := 0
		for _, r := range out.Resources {
			if _, ok := r.Object.(*cmv1.Certificate); ok {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		name         string
		run          func(*Input) *Output
		states       map[string]string
		reason       conditions.Reason
		certificates int
	}{
		{"first run, no record written", func(in *Input) *Output { return settled(t, in) }, map[string]string{
			"www.example.org HTTPRoute/tenant-root/www":        "Covered",
			"app.alice.example.org HTTPRoute/tenant-alice/app": "Waiting",
		}, conditions.ReasonCertificateOrdersWaiting, 0},
		{"ordered", func(in *Input) *Output { return ordered(t, in) }, map[string]string{
			"www.example.org HTTPRoute/tenant-root/www":        "Covered",
			"app.alice.example.org HTTPRoute/tenant-alice/app": "Covered",
		}, conditions.ReasonListenersFit, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := in
			out := c.run(&in)
			if diff := cmp.Diff(c.states, hostnameStates(out)); diff != "" {
				t.Errorf("hostname states (-want +got):\n%s", diff)
			}
			if got := condition(out, conditions.ListenersReady); got.Reason != c.reason {
				t.Errorf("ListenersReady: %s (%s), want %s", got.Reason, got.Message, c.reason)
			}
			if n := certificates(out); n != c.certificates {
				t.Errorf("%d Certificates composed, want %d", n, c.certificates)
			}
		})
	}
}

// TestRouteReportsLeaveOutWaitingForTheRecord: a hostname that waits only
// for the order ledger's record to be written (served within a provider
// round trip) writes no route report in its namespace; one that waits for
// the quota does.
func TestRouteReportsLeaveOutWaitingForTheRecord(t *testing.T) {
	report := func(out *Output) bool {
		for _, r := range out.Resources {
			if o, ok := r.Object.(*kobjv1alpha1.Object); ok && o.Name == ReportObjectName("cozystack", "tenant-alice") {
				return true
			}
		}
		return false
	}
	in := rootInput(http01Spec)
	in.Now = t0
	in.Routes = []Route{routeTo("tenant-alice", "app", "app.alice.example.org")}
	first := settled(t, &in)
	if s := hostnameStates(first)["app.alice.example.org HTTPRoute/tenant-alice/app"]; s != string(v1alpha1.HostnameWaiting) || report(first) {
		t.Errorf("first run, no record written: app.alice.example.org %s, route report %v; want Waiting, no report", s, report(first))
	}
	spent := rootInput(http01Spec)
	spent.Now, spent.Quota = t0, acme.OrderQuota{Limit: 2, Window: time.Hour}
	spent.Routes = []Route{routeTo("tenant-alice", "app", hosts(3, "a%d.alice.example.org")...)}
	out := ordered(t, &spent)
	if !report(out) {
		t.Errorf("alice's hostnames waiting for the quota (%v) leave no route report in her namespace", hostnameStates(out))
	}
}
