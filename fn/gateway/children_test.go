package gateway

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/conditions"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

func TestDiscoverChildren(t *testing.T) {
	cases := map[string]struct {
		reason string
		nss    []Namespace
		want   []string
	}{
		"SortedByApex": {
			reason: "Children come in apex order, not namespace order",
			nss:    append(platform(), labelled("tenant-aaa", "zed.example.org")),
			want:   []string{"alice.example.org tenant-alice Listening", "bob.example.org tenant-bob Listening", "zed.example.org tenant-aaa Listening"},
		},
		"OwnNamespaceIsNoChild": {
			reason: "The TenantGateway's own namespace is never its child, whatever its host label",
			nss:    []Namespace{labelled("tenant-root", "root.example.org")},
		},
		"ApexAndNoHostAreNoChildren": {
			reason: "A namespace delegated the apex itself, or nothing, is no child apex",
			nss:    []Namespace{labelled("tenant-apex", "example.org"), labelled("tenant-nohost", "")},
		},
		"NotAdmitted": {
			reason: "A namespace marked for another Gateway gets no child apex here",
			nss:    []Namespace{{Name: "tenant-eve", Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-other", kube.LabelNamespaceHost: "eve.example.org"}}},
		},
		"OutsideApex": {
			reason: "A child apex outside the apex, a suffix that is no subdomain, a wildcard or an invalid name is reported and gets nothing",
			nss: []Namespace{
				labelled("tenant-a", "evil.com"),
				labelled("tenant-b", "badexample.org"),
				labelled("tenant-c", "example.org.evil.com"),
				labelled("tenant-d", "*.example.org"),
				labelled("tenant-e", "Shop.example.org"),
			},
			want: []string{"*.example.org tenant-d OutsideApex", "Shop.example.org tenant-e OutsideApex", "badexample.org tenant-b OutsideApex", "evil.com tenant-a OutsideApex", "example.org.evil.com tenant-c OutsideApex"},
		},
		"SharedApexFirstByName": {
			reason: "Two namespaces labelled with one apex: the first by name owns the child apex, every run the same",
			nss:    []Namespace{labelled("tenant-bob", "bob.example.org"), labelled("tenant-alice-evil", "bob.example.org")},
			want:   []string{"bob.example.org tenant-alice-evil Listening"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in, tn := admittedBy(http01Spec, tc.nss)
			var got []string
			for _, c := range discoverChildren(in, tn) {
				got = append(got, fmt.Sprintf("%s %s %s", c.apex, c.namespace, c.state))
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\ndiscoverChildren(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCapCertificateNames(t *testing.T) {
	// 50 children, each its own branch: one more than the dns01
	// certificate's 98 child names hold.
	var nss []Namespace
	var all []string
	for i := range 50 {
		apex := fmt.Sprintf("c%02d.example.org", i)
		nss = append(nss, labelled(fmt.Sprintf("tenant-c%02d", i), apex))
		all = append(all, apex)
	}
	cases := map[string]struct {
		reason   string
		spec     v1alpha1.TenantGatewaySpec
		nss      []Namespace
		observed []string
		previous []string
		want     []string
	}{
		"UnderTheLimit": {
			reason: "49 children fit",
			spec:   dns01Spec, nss: nss[:49],
		},
		"HTTP01HasNoCap": {
			reason: "Only the dns01 certificate carries child apexes",
			spec:   http01Spec, nss: nss,
		},
		"OnCertificateKeepTheirPlace": {
			reason: "The children on the observed certificate keep their names; the newcomer is left out though it sorts first",
			spec:   dns01Spec, nss: nss, observed: all[1:],
			want: []string{"c00.example.org"},
		},
		"StatusRemembers": {
			reason: "With no certificate observed, the children status remembers keep their place",
			spec:   dns01Spec, nss: nss, previous: all[1:],
			want: []string{"c00.example.org"},
		},
		"CertificateOverStatus": {
			reason: "The observed certificate is what is served; status is only the fallback",
			spec:   dns01Spec, nss: nss, observed: all[1:], previous: all[:49],
			want: []string{"c00.example.org"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in, tn := admittedBy(tc.spec, tc.nss)
			if tc.observed != nil {
				in.Observed = map[string]*kube.ObservedResource{KeyCertificateWildcard: {DNSNames: tc.observed}}
			}
			in.Previous.ChildApexes = map[string]bool{}
			for _, a := range tc.previous {
				in.Previous.ChildApexes[a] = true
			}
			children := discoverChildren(in, tn)
			if tc.spec.CertMode == v1alpha1.CertModeDNS01 {
				capCertificateNames(in, tn, children)
			}
			var got []string
			for _, c := range children {
				if c.state == v1alpha1.ChildApexOverCertificateLimit {
					got = append(got, c.apex)
					if want := "left out of the wildcard certificate: the ACME CA issues at most 100 names per certificate (the apex, its wildcard and two per child apex); give this child tenant a Gateway of its own"; c.message != want {
						t.Errorf("%s\n%s: message %q, want %q", tc.reason, c.apex, c.message, want)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\ncapCertificateNames(...) left out: -want, +got:\n%s", tc.reason, diff)
			}
			if n := len(listeningChildren(children)); n != len(children)-len(got) {
				t.Errorf("%s\nlisteningChildren: %d, want %d", tc.reason, n, len(children)-len(got))
			}
		})
	}
}

func TestAttackCertificateCap(t *testing.T) {
	// bob is served on the wildcard certificate; alice creates 60 nested
	// tenants, whose apexes sort before bob's.
	nss := platform()
	for i := range 60 {
		nss = append(nss, labelled(fmt.Sprintf("tenant-alice-a%02d", i), fmt.Sprintf("a%02d.alice.example.org", i)))
	}
	onCert := []string{"example.org", "*.example.org", "alice.example.org", "*.alice.example.org", "bob.example.org", "*.bob.example.org"}
	for _, tc := range []struct {
		name     string
		observed map[string]*kube.ObservedResource
		previous PreviousStatus
	}{
		{name: "CertificateObserved", observed: map[string]*kube.ObservedResource{KeyCertificateWildcard: {DNSNames: onCert}}},
		{name: "StatusRemembers", previous: PreviousStatus{ChildApexes: map[string]bool{"alice.example.org": true, "bob.example.org": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each nested tenant routes a name: an idle zone would hold
			// no name at all.
			routes := []Route{routeTo("tenant-bob", "shop", "shop.bob.example.org")}
			for i := range 60 {
				routes = append(routes, routeTo(fmt.Sprintf("tenant-alice-a%02d", i), "r", fmt.Sprintf("www.a%02d.alice.example.org", i)))
			}
			out := attack(t, Input{Spec: dns01Spec, Namespaces: nss, Observed: tc.observed, Previous: tc.previous, Routes: routes})
			states := map[string]v1alpha1.ChildApexState{}
			for _, c := range out.ChildApexes {
				states[c.Apex] = c.State
			}
			// bob is served and used: he keeps his names. alice is on
			// the certificate but routes nothing: her idle zone gives its
			// names up to the nested tenants that route.
			if states["bob.example.org"] != v1alpha1.ChildApexListening || states["alice.example.org"] != v1alpha1.ChildApexIdle {
				t.Errorf("bob %s (want Listening), alice %s (want Idle)", states["bob.example.org"], states["alice.example.org"])
			}
			if got := hostnameStates(out)["shop.bob.example.org HTTPRoute/tenant-bob/shop"]; got != "Covered" {
				t.Errorf("bob's hostname is %s, want Covered", got)
			}
			if n := countStates(out, v1alpha1.ChildApexOverCertificateLimit); n != 61-49 {
				t.Errorf("children left out of the certificate: got %d, want %d", n, 61-49)
			}
			if c := condition(out, conditions.ListenersReady); c.Reason != conditions.ReasonCertificateNameLimitExceeded {
				t.Errorf("ListenersReady reason %s, want %s: %s", c.Reason, conditions.ReasonCertificateNameLimitExceeded, c.Message)
			}
		})
	}
}

func countStates(out *Output, s v1alpha1.ChildApexState) int {
	n := 0
	for _, c := range out.ChildApexes {
		if c.State == s {
			n++
		}
	}
	return n
}

// TestForgedHostLabel: two namespaces with one host label are delegated the
// same zone; the function cannot tell a forged label from a real one, so the
// tenant layer must never derive one outside the parent's zone (fn/tenant)
// and only trusted callers may set it (L3, L4). This pins down what the
// function does then: the zone's first namespace by name owns its listener
// record, and the tie goes by name.
func TestForgedHostLabel(t *testing.T) {
	nss := append(platform(), labelled("tenant-alice-evil", "bob.example.org"))
	out := attack(t, Input{Spec: dns01Spec, Namespaces: nss, Routes: []Route{
		routeTo("tenant-bob", "shop", "shop.bob.example.org"),
		routeTo("tenant-alice-evil", "shop", "shop.bob.example.org"),
	}})
	if s := hostnameStates(out)["shop.bob.example.org HTTPRoute/tenant-bob/shop"]; s != "Conflict" {
		t.Errorf("bob's shop.bob.example.org is %s; children: %v", s, viewOf(t, out).Children)
	}
}
