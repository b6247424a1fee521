package gateway

import (
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/google/go-cmp/cmp"
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
		reason       ConditionReason
		certificates int
	}{
		{"first run, no record written", func(in *Input) *Output { return settled(t, in) }, map[string]string{
			"www.example.org HTTPRoute/tenant-root/www":        "Covered",
			"app.alice.example.org HTTPRoute/tenant-alice/app": "Waiting",
		}, ReasonCertificateOrdersWaiting, 0},
		{"ordered", func(in *Input) *Output { return ordered(t, in) }, map[string]string{
			"www.example.org HTTPRoute/tenant-root/www":        "Covered",
			"app.alice.example.org HTTPRoute/tenant-alice/app": "Covered",
		}, ReasonListenersFit, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := in
			out := c.run(&in)
			if diff := cmp.Diff(c.states, hostnameStates(out)); diff != "" {
				t.Errorf("hostname states (-want +got):\n%s", diff)
			}
			if got := condition(out, ConditionListenersReady); got.Reason != c.reason {
				t.Errorf("ListenersReady: %s (%s), want %s", got.Reason, got.Message, c.reason)
			}
			if n := certificates(out); n != c.certificates {
				t.Errorf("%d Certificates composed, want %d", n, c.certificates)
			}
		})
	}
}
