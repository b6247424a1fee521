package gateway

import (
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/tgwspec"
)

// admittedBy is tenant-root's TenantGateway cozystack as Compose reads it
// before planning: the spec defaulted, the namespaces sorted by name and
// looked up by name, and who may use the Gateway.
func admittedBy(spec v1alpha1.TenantGatewaySpec, nss []Namespace, routes ...Route) (*Input, *tenancy) {
	in := &Input{Name: "cozystack", Namespace: "tenant-root", CertManagerNamespace: "cozy-cert-manager", Spec: tgwspec.Defaulted(spec), Routes: routes, Namespaces: slices.Clone(nss), NamedNamespaces: map[string]*Namespace{}}
	sort.Slice(in.Namespaces, func(i, j int) bool { return in.Namespaces[i].Name < in.Namespaces[j].Name })
	for i := range in.Namespaces {
		in.NamedNamespaces[in.Namespaces[i].Name] = &in.Namespaces[i]
	}
	return in, newTenancy(in)
}

func TestCollectClaims(t *testing.T) {
	foreign := Namespace{Name: "tenant-eve", Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-other", kube.LabelNamespaceHost: "eve.example.org"}}
	cases := map[string]struct {
		reason   string
		routes   []Route
		want     []string
		hostless []string
	}{
		"SortedByHostnameThenRoute": {
			reason: "Claims come in hostname order, then route order, whatever order the cluster listed the routes in",
			routes: []Route{routeTo("tenant-root", "b", "b.example.org", "a.example.org"), routeTo("tenant-alice", "z", "a.alice.example.org"), routeTo("cozy-dashboard", "a", "b.example.org")},
			want:   []string{"a.alice.example.org HTTPRoute/tenant-alice/z", "a.example.org HTTPRoute/tenant-root/b", "b.example.org HTTPRoute/cozy-dashboard/a", "b.example.org HTTPRoute/tenant-root/b"},
		},
		"RepeatedHostnameOnce": {
			reason: "A hostname a route lists twice is one claim",
			routes: []Route{routeTo("tenant-root", "www", "www.example.org", "www.example.org")},
			want:   []string{"www.example.org HTTPRoute/tenant-root/www"},
		},
		"NotAdmitted": {
			reason: "A namespace marked for another Gateway claims nothing here, and its hostless routes are not listed",
			routes: []Route{routeTo("tenant-eve", "grab", "www.example.org"), routeTo("tenant-eve", "all")},
		},
		"OtherGateway": {
			reason: "A route on another Gateway claims nothing",
			routes: []Route{{Kind: KindHTTPRoute, Namespace: "tenant-root", Name: "x", ParentRefs: []ParentRef{{Name: "other"}}, Hostnames: []string{"x.example.org"}}},
		},
		"Hostless": {
			reason:   "Routes without hostnames claim nothing and are listed in ID order",
			routes:   []Route{routeTo("tenant-root", "b"), routeTo("tenant-alice", "a")},
			hostless: []string{"HTTPRoute/tenant-alice/a", "HTTPRoute/tenant-root/b"},
		},
		"OwnRedirect": {
			reason:   "The function's redirect route is not a tenant's; a tenant's route of that name in its own namespace still is",
			routes:   []Route{routeTo("tenant-root", "cozystack-http-redirect"), routeTo("tenant-alice", "cozystack-http-redirect")},
			hostless: []string{"HTTPRoute/tenant-alice/cozystack-http-redirect"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in, tn := admittedBy(http01Spec, append(platform(), foreign), tc.routes...)
			claims, hostless := collectClaims(in, tn)
			var got, gotHostless []string
			for _, c := range claims {
				got = append(got, c.hostname+" "+c.route)
			}
			for _, r := range hostless {
				gotHostless = append(gotHostless, r.ID())
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\ncollectClaims(...) claims: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.hostless, gotHostless, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\ncollectClaims(...) hostless: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestJudgeShape(t *testing.T) {
	nss := append(platform(), labelled("tenant-alice-x", "x.alice.example.org"), labelled("tenant-nohost", ""), labelled("tenant-apex2", "example.org"))
	passthrough := v1alpha1.TenantGatewaySpec{Apex: "example.org", AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-dashboard"}, TLSPassthroughServices: []v1alpha1.DNSLabel{"api"}}
	tls := func(ns, name, h string) Route {
		r := routeTo(ns, name, h)
		r.Kind = KindTLSRoute
		return r
	}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.TenantGatewaySpec
		route  Route
		want   string
	}{
		"Unjudged": {
			reason: "A hostname under the claimant's delegation waits for a listener decision",
			spec:   http01Spec, route: routeTo("tenant-alice", "a", "a.alice.example.org"),
			want: "a.alice.example.org HTTPRoute/tenant-alice/a ",
		},
		"InvalidHostname": {
			reason: "An uppercase hostname can never be served",
			spec:   http01Spec, route: routeTo("tenant-alice", "a", "A.alice.example.org"),
			want: `A.alice.example.org HTTPRoute/tenant-alice/a Invalid "A.alice.example.org" is not a valid Gateway API hostname (lowercase DNS name, optionally starting with "*.")`,
		},
		"WildcardInHTTP01": {
			reason: "HTTP-01 cannot issue a wildcard",
			spec:   http01Spec, route: routeTo("tenant-alice", "a", "*.alice.example.org"),
			want: "*.alice.example.org HTTPRoute/tenant-alice/a Invalid HTTP-01 cannot issue wildcard certificates; use certMode dns01 or existingSecret for wildcard hostnames",
		},
		"SuffixIsNotASubdomain": {
			reason: "badexample.org ends in example.org but is not under it",
			spec:   http01Spec, route: routeTo("tenant-root", "a", "badexample.org"),
			want: "badexample.org HTTPRoute/tenant-root/a OutsideApex badexample.org is neither example.org nor a subdomain of it; a listener for it would make the admission policy refuse the whole Gateway",
		},
		"ChildTakesSibling": {
			reason: "alice may not claim under bob's host label",
			spec:   http01Spec, route: routeTo("tenant-alice", "steal", "shop.bob.example.org"),
			want: "shop.bob.example.org HTTPRoute/tenant-alice/steal NotDelegated shop.bob.example.org is outside what namespace tenant-alice was delegated: alice.example.org and its subdomains (its namespace.cozystack.io/host label)",
		},
		"ChildTakesParent": {
			reason: "alice may not claim the apex itself",
			spec:   http01Spec, route: routeTo("tenant-alice", "steal", "example.org"),
			want: "example.org HTTPRoute/tenant-alice/steal NotDelegated example.org is outside what namespace tenant-alice was delegated: alice.example.org and its subdomains (its namespace.cozystack.io/host label)",
		},
		"NoHostLabel": {
			reason: "A labelled namespace without a host label, not attached, was delegated nothing",
			spec:   http01Spec, route: routeTo("tenant-nohost", "a", "a.example.org"),
			want: "a.example.org HTTPRoute/tenant-nohost/a NotDelegated namespace tenant-nohost has no namespace.cozystack.io/host label and is neither the TenantGateway's namespace nor one of its attachedNamespaces, so it was delegated no hostname",
		},
		"WildcardIntoChildZone": {
			reason: "alice's wildcard may not reach into the zone of her nested tenant x",
			spec:   dns01Spec, route: routeTo("tenant-alice", "grab", "*.y.x.alice.example.org"),
			want: "*.y.x.alice.example.org HTTPRoute/tenant-alice/grab NotDelegated *.y.x.alice.example.org reaches into the zone of child tenant apex x.alice.example.org (namespace tenant-alice-x); only namespaces delegated x.alice.example.org may claim wildcards there",
		},
		"WildcardInOwnZone": {
			reason: "x's own wildcard in its zone is fine",
			spec:   dns01Spec, route: routeTo("tenant-alice-x", "w", "*.y.x.alice.example.org"),
			want: "*.y.x.alice.example.org HTTPRoute/tenant-alice-x/w ",
		},
		"PassthroughToATenant": {
			reason: "api.<apex> is the passthrough listener's, delegated only to publishers: not to a tenant whose host label is the apex",
			spec:   passthrough, route: tls("tenant-apex2", "grab", "api.example.org"),
			want: "api.example.org TLSRoute/tenant-apex2/grab NotDelegated api.example.org is the TLS passthrough listener tls-api, delegated only to the TenantGateway's namespace and its attachedNamespaces",
		},
		"TLSRouteOffPassthrough": {
			reason: "A TLSRoute attaches only to a passthrough listener",
			spec:   passthrough, route: tls("tenant-alice", "t", "db.alice.example.org"),
			want: "db.alice.example.org TLSRoute/tenant-alice/t NoMatchingParent a TLSRoute attaches only to a TLS passthrough listener (tls-<service> for <service>.example.org), and this Gateway has none for db.alice.example.org: this route matches no listener (NoMatchingParent)",
		},
		"HTTPRouteOnPassthrough": {
			reason: "An HTTPRoute cannot be served on a passthrough hostname",
			spec:   passthrough, route: routeTo("tenant-root", "web", "api.example.org"),
			want: "api.example.org HTTPRoute/tenant-root/web NoMatchingParent api.example.org is taken by TLS passthrough listener tls-api, which serves TLSRoutes only: this route matches no listener for it (NoMatchingParent)",
		},
		"TLSRouteOnEdge": {
			reason: "An edge Gateway has no TLS listener at all",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeEdge, TLSPassthroughServices: []v1alpha1.DNSLabel{"api"}},
			route:  tls("tenant-root", "t", "api.example.org"),
			want:   "api.example.org TLSRoute/tenant-root/t NoMatchingParent an edge Gateway has only plain-HTTP listeners on port 80, which a TLSRoute cannot attach to: this route matches no listener (NoMatchingParent)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in, tn := admittedBy(tc.spec, nss, tc.route)
			claims, _ := collectClaims(in, tn)
			judgeShape(in, tn, claims, discoverChildren(in, tn))
			var got []string
			for _, c := range claims {
				line := c.hostname + " " + c.route + " " + string(c.state)
				if c.message != "" {
					line += " " + c.message
				}
				got = append(got, line)
			}
			if diff := cmp.Diff([]string{tc.want}, got); diff != "" {
				t.Errorf("%s\njudgeShape(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// A parent's wildcard pin under a child apex takes the child's exact
// hostnames, while status says the child is Covered.
func TestAttackWildcardPinUnderChildApex(t *testing.T) {
	nss := append(platform(), labelled("tenant-alice-x", "x.alice.example.org"))
	for _, spec := range []v1alpha1.TenantGatewaySpec{dns01Spec, {Apex: "example.org", CertMode: v1alpha1.CertModeEdge}} {
		in := Input{Spec: spec, Namespaces: nss, Routes: []Route{
			routeTo("tenant-alice", "grab", "*.y.x.alice.example.org"),
			routeTo("tenant-alice-x", "app", "a.y.x.alice.example.org"),
		}}
		out := attackP(t, &in)
		checkServed(t, &in, out)
		if s := hostnameStates(out)["*.y.x.alice.example.org HTTPRoute/tenant-alice/grab"]; s != "NotDelegated" {
			t.Errorf("alice's wildcard into x's zone is %s, want NotDelegated", s)
		}
	}
}

func TestOwnersOf(t *testing.T) {
	// Claims as judged so far, in claimLess order: the winner's claims of
	// a contested hostname are unjudged, the losers' Conflict.
	judged := []*claim{
		{hostname: "a.example.org", namespace: "tenant-root", route: "HTTPRoute/tenant-root/a"},
		{hostname: "a.example.org", namespace: "tenant-root", route: "HTTPRoute/tenant-root/b"},
		{hostname: "api.example.org", namespace: "tenant-root", route: "TLSRoute/tenant-root/api", passthrough: "tls-api"},
		{hostname: "b.example.org", namespace: "tenant-alice", route: "HTTPRoute/tenant-alice/b", state: v1alpha1.HostnameNotDelegated},
		{hostname: "c.example.org", namespace: "cozy-dashboard", route: "HTTPRoute/cozy-dashboard/c"},
		{hostname: "c.example.org", namespace: "tenant-root", route: "HTTPRoute/tenant-root/c", state: v1alpha1.HostnameConflict},
	}
	cases := map[string]struct {
		reason   string
		claims   []*claim
		contests []*contest
		owners   []owner
		unjudged []string
	}{
		"ContestedAndRefused": {
			reason:   "Two routes of one namespace make one owner; passthrough hostnames have listeners of their own; refused claims own nothing; a contested hostname names its losers",
			claims:   judged,
			contests: []*contest{{hostname: "c.example.org", loserNamespaces: []string{"tenant-root"}}},
			owners: []owner{
				{hostname: "a.example.org", namespace: "tenant-root"},
				{hostname: "c.example.org", namespace: "cozy-dashboard", losers: []string{"tenant-root"}},
			},
			unjudged: []string{"HTTPRoute/tenant-root/a", "HTTPRoute/tenant-root/b", "TLSRoute/tenant-root/api", "HTTPRoute/cozy-dashboard/c"},
		},
		"NoClaims": {
			reason: "No claims, no owners",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.owners, ownersOf(tc.claims, tc.contests), cmp.AllowUnexported(owner{})); diff != "" {
				t.Errorf("%s\nownersOf(...): -want, +got:\n%s", tc.reason, diff)
			}
			var got []string
			for _, c := range unjudged(tc.claims) {
				got = append(got, c.route)
			}
			if diff := cmp.Diff(tc.unjudged, got); diff != "" {
				t.Errorf("%s\nunjudged(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
