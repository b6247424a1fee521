package gateway

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/conditions"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

func TestConditions(t *testing.T) {
	t.Run("ClassWithoutTLSRoute", func(t *testing.T) {
		spec := v1alpha1.TenantGatewaySpec{TLSPassthroughServices: []v1alpha1.DNSLabel{"api"}}
		got := condition(run(t, Input{Spec: spec, GatewayClass: &Class{Name: "envoy-lite", SupportedFeatures: []string{"Gateway", "HTTPRoute"}}}), conditions.GatewayReady)
		want := Condition{Type: conditions.GatewayReady, Reason: conditions.ReasonGatewayClassUnsupported,
			Message: "GatewayClass envoy-lite lists its supported features but not TLSRoute, so nothing would serve the TLS passthrough listeners of Gateway tenant-root/cozystack"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
		// A class that lists no features is not judged, nor one with TLSRoute,
		// nor a Gateway without passthrough listeners.
		for _, in := range []Input{
			{Spec: spec, GatewayClass: &Class{Name: "old"}},
			{Spec: spec, GatewayClass: &Class{Name: "full", SupportedFeatures: []string{"HTTPRoute", "TLSRoute"}}},
			{GatewayClass: &Class{Name: "envoy-lite", SupportedFeatures: []string{"HTTPRoute"}}},
		} {
			if c := condition(run(t, in), conditions.GatewayReady); c.Reason == conditions.ReasonGatewayClassUnsupported {
				t.Errorf("class %s judged unsupported: %s", in.GatewayClass.Name, c.Message)
			}
		}
	})
	t.Run("GuardBeforeClass", func(t *testing.T) {
		// A refused object and a missing class: ReconcileError first.
		out := run(t, Input{Probes: map[string]Probe{KeyIssuer: {Exists: true}}})
		if c := condition(out, conditions.GatewayReady); c.Reason != conditions.ReasonReconcileError {
			t.Errorf("GatewayReady %s, want %s", c.Reason, conditions.ReasonReconcileError)
		}
	})
	t.Run("HostnamesNotServed", func(t *testing.T) {
		out := run(t, Input{Routes: []Route{routeTo("tenant-root", "r", "www.example.org", "shop.example.net", "Bad_Name.example.org", "*.example.org")}})
		want := Condition{Type: conditions.RoutesAccepted, Reason: conditions.ReasonHostnamesNotServed,
			Message: "hostnames that can never be served (see status.hostnames): *.example.org (Invalid), Bad_Name.example.org (Invalid), shop.example.net (OutsideApex)"}
		if diff := cmp.Diff(want, condition(out, conditions.RoutesAccepted)); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
	})
	t.Run("ChildApexOutsideApex", func(t *testing.T) {
		out := run(t, Input{Namespaces: []Namespace{labelled("tenant-x", "x.example.net")}})
		want := Condition{Type: conditions.RoutesAccepted, Reason: conditions.ReasonChildApexOutsideApex,
			Message: "child tenant apexes outside the apex get no listener (see status.childApexes): x.example.net (namespace tenant-x)"}
		if diff := cmp.Diff(want, condition(out, conditions.RoutesAccepted)); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
	})
	t.Run("EveryCauseInOrder", func(t *testing.T) {
		// Every cause at once, each with more items than fit: the reason
		// is the first by precedence, and the message names every cause
		// within the bound.
		var routes []Route
		for i := range 200 {
			h := fmt.Sprintf("h%03d.example.org", i)
			routes = append(routes, routeTo("cozy-a", fmt.Sprintf("w%03d", i), h), routeTo("tenant-root", fmt.Sprintf("l%03d", i), h))
			tls := routeTo("tenant-root", fmt.Sprintf("t%03d", i), fmt.Sprintf("t%03d.example.org", i))
			tls.Kind = KindTLSRoute
			routes = append(routes, tls, routeTo("tenant-root", fmt.Sprintf("o%03d", i), fmt.Sprintf("o%03d.example.net", i)))
		}
		nss := []Namespace{{Name: "cozy-other", Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-x"}}}
		named := map[string]*Namespace{"cozy-other": {Name: "cozy-other", Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-x"}, Annotations: map[string]string{AnnotationAttachedBy: "tenant-x"}}}
		for i := range 200 {
			nss = append(nss, labelled(fmt.Sprintf("tenant-x%03d", i), fmt.Sprintf("x%03d.example.net", i)))
		}
		out := run(t, Input{Spec: v1alpha1.TenantGatewaySpec{AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-a", "cozy-other"}}, Routes: routes, Namespaces: nss, NamedNamespaces: named})
		c := condition(out, conditions.RoutesAccepted)
		if c.Reason != conditions.ReasonHostnameConflict || len(c.Message) > text.MaxMessage {
			t.Errorf("RoutesAccepted %s with %d bytes, want %s within %d", c.Reason, len(c.Message), conditions.ReasonHostnameConflict, text.MaxMessage)
		}
		at := -1
		for _, part := range []string{"hostname conflicts: ", "match no listener", "another Gateway's", "can never be served", "child tenant apexes outside"} {
			i := strings.Index(c.Message, part)
			if i <= at {
				t.Errorf("message does not name %q after the causes before it: %s", part, c.Message)
			}
			at = i
		}
	})
	t.Run("HostnameConflict", func(t *testing.T) {
		out := run(t, Input{
			Spec:       v1alpha1.TenantGatewaySpec{AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-b", "tenant-a"}},
			Routes:     []Route{routeTo("tenant-a", "r", "x.example.org", "y.example.org"), routeTo("cozy-b", "s", "y.example.org", "x.example.org")},
			Namespaces: nil,
		})
		want := Condition{Type: conditions.RoutesAccepted, Reason: conditions.ReasonHostnameConflict,
			Message: "hostname conflicts: HTTPRoute/tenant-a/r lost x.example.org to HTTPRoute/cozy-b/s; HTTPRoute/tenant-a/r lost y.example.org to HTTPRoute/cozy-b/s"}
		if diff := cmp.Diff(want, condition(out, conditions.RoutesAccepted)); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
	})
	t.Run("NoMatchingParent", func(t *testing.T) {
		tls := Route{Kind: KindTLSRoute, Namespace: "tenant-root", Name: "api", ParentRefs: []ParentRef{{Name: "cozystack"}}, Hostnames: []string{"api.example.org"}}
		out := run(t, Input{Spec: v1alpha1.TenantGatewaySpec{CertMode: v1alpha1.CertModeEdge}, Routes: []Route{tls}})
		want := Condition{Type: conditions.RoutesAccepted, Reason: conditions.ReasonNoMatchingParent,
			Message: "routes target this Gateway but match no listener for these hostnames (see status.hostnames): TLSRoute/tenant-root/api (api.example.org)"}
		if diff := cmp.Diff(want, condition(out, conditions.RoutesAccepted)); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
	})
	t.Run("ListenerLimitExceeded", func(t *testing.T) {
		out := run(t, Input{Routes: []Route{routeTo("tenant-root", "apps", hosts(70, "app%02d.example.org")...)}})
		want := Condition{Type: conditions.ListenersReady, Reason: conditions.ReasonListenerLimitExceeded,
			Message: "7 hostnames or child apexes were left out: a Gateway holds at most 64 listeners (see status.hostnames and status.childApexes); certMode dns01 serves every hostname under the apex with a fixed set of listeners"}
		if diff := cmp.Diff(want, condition(out, conditions.ListenersReady)); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
	})
}

// TestConflictCauseSortedBeforeBound: the HostnameConflict message names the
// first losses by route across every contest, not the first hundred taken
// in hostname order and then sorted: past the bound, a loss whose route
// sorts first is still named first.
func TestConflictCauseSortedBeforeBound(t *testing.T) {
	var contests []*contest
	for i := range maxCauseItems + 1 {
		contests = append(contests, &contest{
			hostname: fmt.Sprintf("h%03d.example.org", i),
			winner:   &claim{route: "HTTPRoute/owner/www"},
			losers:   []string{fmt.Sprintf("HTTPRoute/z%03d/r", i)},
		})
	}
	// The last contest by hostname has the loss whose route sorts first.
	contests[maxCauseItems].losers = []string{"HTTPRoute/a/r"}
	got := routeCauses(nil, contests, nil, nil).conflict
	if diff := cmp.Diff([]string{"HTTPRoute/a/r lost h100.example.org to HTTPRoute/owner/www", "HTTPRoute/z000/r lost h000.example.org to HTTPRoute/owner/www"}, got.items[:2]); diff != "" {
		t.Errorf("first items: -want, +got:\n%s", diff)
	}
	if got.total != maxCauseItems+1 || got.sum() != "" {
		t.Errorf("total %d, digest %q: want %d and none (status keeps the conflicts' own digest)", got.total, got.sum(), maxCauseItems+1)
	}
}
