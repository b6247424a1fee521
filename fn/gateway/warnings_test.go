package gateway

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// TestWarningsOnEachCause: every cause warns once, when it appears, and not
// again while it stays the same; each warning is bounded.
func TestWarningsOnEachCause(t *testing.T) {
	notProgrammed := map[string]*kube.ObservedResource{KeyGateway: {
		Conditions: map[string]string{"Accepted": "True", "Programmed": "False"},
		Reasons:    map[string]string{"Programmed": "AddressNotAssigned"},
		Messages:   map[string]string{"Programmed": "No addresses have been assigned to the Gateway"},
	}}
	certNotReady := map[string]*kube.ObservedResource{
		KeyGateway: {Conditions: accepted, Listeners: map[string]map[string]string{"http": accepted, wwwListener: accepted}},
		wwwCert:    {Conditions: map[string]string{"Ready": "False"}, Reasons: map[string]string{"Ready": "DoesNotExist"}, Messages: map[string]string{"Ready": "Issuing certificate as Secret does not exist"}},
	}
	var outside []string
	for i := range 200 {
		outside = append(outside, fmt.Sprintf("h%03d.example.net", i))
	}
	cases := map[string]struct {
		in      Input
		noClass bool
		want    string
	}{
		"Refused": {
			in:   Input{Probes: map[string]Probe{KeyIssuer: {Exists: true}}},
			want: "the ownership guard refuses 1 objects the TenantGateway needs, so it is not Ready: Issuer tenant-root/cozystack-gateway exists but is not owned by TenantGateway cozystack; refusing to take over (delete it manually if you want the function to manage it)",
		},
		"GatewayClassNotFound": {
			noClass: true,
			want:    "GatewayClassNotFound: GatewayClass cilium does not exist, so no controller will accept Gateway tenant-root/cozystack; set spec.gatewayClassName to a class of the cluster (kubectl get gatewayclass)",
		},
		"GatewayClassUnsupported": {
			in:   Input{Spec: v1alpha1.TenantGatewaySpec{TLSPassthroughServices: []v1alpha1.DNSLabel{"api"}}, GatewayClass: &Class{Name: "lite", SupportedFeatures: []string{"HTTPRoute"}}},
			want: "GatewayClassUnsupported: GatewayClass lite lists its supported features but not TLSRoute, so nothing would serve the TLS passthrough listeners of Gateway tenant-root/cozystack",
		},
		"GatewayNotProgrammed": {
			in:   Input{Observed: notProgrammed},
			want: "GatewayNotProgrammed: Underlying Gateway tenant-root/cozystack has not been programmed by its controller yet: AddressNotAssigned: No addresses have been assigned to the Gateway",
		},
		"CertificateNotReady": {
			in:   Input{Observed: certNotReady},
			want: "certificates not ready changed; 1 listeners wait for theirs: " + wwwListener + " (CertificateNotReady: DoesNotExist: Issuing certificate as Secret does not exist)",
		},
		"NoMatchingParent": {
			in:   Input{Routes: []Route{naming(ListenerHTTPS, 0, "tenant-root", "www", "www.example.org")}},
			want: "routes matching no listener changed; 1 now: HTTPRoute/tenant-root/www (www.example.org)",
		},
		"HostnamesNotServed": {
			in:   Input{Routes: []Route{routeTo("tenant-root", "www", outside...)}},
			want: "hostnames that can never be served changed; 200 now: h000.example.net (OutsideApex), ",
		},
		"ChildApexOutsideApex": {
			in:   Input{Namespaces: []Namespace{labelled("tenant-x", "x.example.net")}},
			want: "child tenant apexes outside the apex changed; 1 now: x.example.net (namespace tenant-x)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			compose := run
			if tc.noClass {
				compose = runNoClass
			}
			first := compose(t, tc.in)
			if len(first.Warnings) != 1 || !strings.HasPrefix(first.Warnings[0], tc.want) || len(first.Warnings[0]) > text.MaxMessage {
				t.Fatalf("first run: want one warning of at most %d bytes starting %q, got %q", text.MaxMessage, tc.want, first.Warnings)
			}
			again := tc.in
			again.Previous = PreviousStatus{Digests: first.Digests}
			if second := compose(t, again); len(second.Warnings) != 0 {
				t.Errorf("nothing changed: want no warning, got %q", second.Warnings)
			}
		})
	}
}

// TestWarningsOnChange: a set that changes warns again; one that empties
// says nothing, and warns when it comes back.
func TestWarningsOnChange(t *testing.T) {
	one := run(t, Input{Routes: []Route{routeTo("tenant-root", "r", "a.example.net")}})
	two := run(t, Input{Routes: []Route{routeTo("tenant-root", "r", "a.example.net", "b.example.net")}, Previous: PreviousStatus{Digests: one.Digests}})
	want := []string{"hostnames that can never be served changed; 2 now: a.example.net (OutsideApex), b.example.net (OutsideApex)"}
	if diff := cmp.Diff(want, two.Warnings); diff != "" {
		t.Errorf("changed: -want, +got:\n%s", diff)
	}
	none := run(t, Input{Previous: PreviousStatus{Digests: two.Digests}})
	if len(none.Warnings) != 0 || none.Digests.NotServed != "" {
		t.Errorf("emptied: want no warning and no digest, got %q and %q", none.Warnings, none.Digests.NotServed)
	}
	back := run(t, Input{Routes: []Route{routeTo("tenant-root", "r", "a.example.net")}, Previous: PreviousStatus{Digests: none.Digests}})
	if len(back.Warnings) != 1 {
		t.Errorf("back: want a warning, got %q", back.Warnings)
	}
}

func TestWarningsOnlyOnChange(t *testing.T) {
	routes := append([]Route{routeTo("tenant-a", "r", "x.example.org"), routeTo("cozy-b", "s", "x.example.org")},
		routeTo("tenant-root", "apps", hosts(70, "app%02d.example.org")...))
	spec := v1alpha1.TenantGatewaySpec{AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-b", "tenant-a"}}
	first := run(t, Input{Spec: spec, Routes: routes})
	want := []string{
		"hostname conflicts changed; 1 contested now: x.example.org: HTTPRoute/cozy-b/s keeps it, HTTPRoute/tenant-a/r refused",
		// 71 hostnames, 63 HTTPS listeners shared round-robin: the owner's
		// app00 and cozy-b's x.example.org first, then the owner's others.
		"hostnames and child apexes left out changed; 8 left out now: app62.example.org (OverListenerLimit), app63.example.org (OverListenerLimit), app64.example.org (OverListenerLimit), app65.example.org (OverListenerLimit), app66.example.org (OverListenerLimit), app67.example.org (OverListenerLimit), app68.example.org (OverListenerLimit), app69.example.org (OverListenerLimit)",
		"Gateway tenant-root/cozystack now has 64 listeners, close to the limit of 64; certMode dns01 serves every hostname under the apex with a fixed set of listeners",
	}
	if diff := cmp.Diff(want, first.Warnings); diff != "" {
		t.Errorf("first run: -want, +got:\n%s", diff)
	}

	// The next run sees what the first wrote: nothing changed, nothing said.
	prev := PreviousStatus{Digests: first.Digests, Listeners: map[string]string{}}
	names := map[string]string{}
	var order []string
	for _, l := range first.ListenerStatus {
		prev.Listeners[l.Name] = l.Hostname
		names[l.Name] = l.Hostname
		order = append(order, l.Name)
	}
	second := run(t, Input{Spec: spec, Routes: routes, Previous: prev, Observed: map[string]*kube.ObservedResource{KeyGateway: {ListenerNames: order, ListenerHostnames: names}}})
	if len(second.Warnings) != 0 {
		t.Errorf("second run, nothing changed: want no warnings, got %q", second.Warnings)
	}
}
