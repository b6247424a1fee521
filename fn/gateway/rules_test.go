package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

const (
	selHTTP = "in=tenant-root,cozy-cert-manager"
	// Route kinds where the class is not Cilium's (or not observed): what
	// each protocol serves.
	k443     = "kinds=HTTPRoute"
	kTLS     = "kinds=TLSRoute"
	httpLine = "http 80/HTTP " + selHTTP
)

// compose composes tenant-root's Gateway; served are hostnames whose http01
// listener is on the observed Gateway.
func compose(t *testing.T, spec v1alpha1.TenantGatewaySpec, routes []Route, nss []Namespace, served ...string) view {
	t.Helper()
	var obs map[string]*ObservedResource
	if len(served) > 0 {
		gw := &ObservedResource{ListenerHostnames: map[string]string{}}
		for _, h := range served {
			gw.ListenerNames = append(gw.ListenerNames, HostListenerName(h))
			gw.ListenerHostnames[HostListenerName(h)] = h
		}
		obs = map[string]*ObservedResource{KeyGateway: gw}
	}
	// The edge looks up the owner and attached namespaces by name.
	named := map[string]*Namespace{}
	for i := range nss {
		named[nss[i].Name] = &nss[i]
	}
	out, err := Compose(Input{Name: "cozystack", Namespace: "tenant-root", CertManagerNamespace: "cozy-cert-manager", Spec: spec, Routes: routes, Namespaces: nss, NamedNamespaces: named, Observed: obs})
	if err != nil {
		t.Fatalf("Compose: %v", err)
	}
	return viewOf(t, out)
}

func TestAttachment(t *testing.T) {
	spec := v1alpha1.TenantGatewaySpec{Apex: "example.org", AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-dashboard"}}
	cases := map[string]struct {
		reason string
		route  Route
		nss    []Namespace
		want   []string
	}{
		"SameNamespaceNoGroupKind": {
			reason: "A parentRef with only a name targets the Gateway in the route's own namespace",
			route:  Route{Kind: KindHTTPRoute, Namespace: "tenant-root", Name: "a", ParentRefs: []ParentRef{{Name: "cozystack"}}, Hostnames: []string{"a.example.org"}},
			want:   []string{"a.example.org HTTPRoute/tenant-root/a Listening"},
		},
		"ExplicitGroupKindSectionPort": {
			reason: "Group, kind and namespace may be explicit; sectionName does not change whether a route counts",
			route: Route{Kind: KindHTTPRoute, Namespace: "cozy-dashboard", Name: "a", ParentRefs: []ParentRef{
				{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "tenant-root", Name: "cozystack"},
			}, Hostnames: []string{"a.example.org"}},
			want: []string{"a.example.org HTTPRoute/cozy-dashboard/a Listening"},
		},
		"OtherGateway": {
			reason: "A route on another Gateway is ignored",
			route:  Route{Kind: KindHTTPRoute, Namespace: "tenant-root", Name: "a", ParentRefs: []ParentRef{{Name: "other"}}, Hostnames: []string{"a.example.org"}},
		},
		"OtherKind": {
			reason: "A parentRef to something other than a Gateway is ignored",
			route:  Route{Kind: KindHTTPRoute, Namespace: "tenant-root", Name: "a", ParentRefs: []ParentRef{{Kind: "Service", Name: "cozystack"}}, Hostnames: []string{"a.example.org"}},
		},
		"OtherNamespaceWithoutNamespace": {
			reason: "A parentRef without a namespace means the route's namespace, not the Gateway's",
			route:  Route{Kind: KindHTTPRoute, Namespace: "cozy-dashboard", Name: "a", ParentRefs: []ParentRef{{Name: "cozystack"}}, Hostnames: []string{"a.example.org"}},
		},
		"UnadmittedNamespace": {
			reason: "Routes from a namespace neither attached nor labelled are ignored entirely",
			route:  routeTo("tenant-eve", "a", "a.example.org"),
			nss:    []Namespace{{Name: "tenant-eve", Labels: map[string]string{LabelNamespaceGateway: "tenant-other"}}},
		},
		"LabelledNamespace": {
			reason: "A namespace labelled namespace.cozystack.io/gateway=tenant-root is admitted",
			route:  routeTo("tenant-alice", "a", "a.example.org"),
			nss:    []Namespace{labelled("tenant-alice", "example.org")},
			want:   []string{"a.example.org HTTPRoute/tenant-alice/a Listening"},
		},
		"LabelledNamespaceWithoutHost": {
			reason: "A labelled namespace without a host label, neither the TenantGateway's nor attached, was delegated nothing",
			route:  routeTo("tenant-alice", "a", "a.example.org"),
			nss:    []Namespace{labelled("tenant-alice", "")},
			want:   []string{"a.example.org HTTPRoute/tenant-alice/a NotDelegated"},
		},
		"AttachedNamespaceOfAnotherGateway": {
			reason: "An attached namespace whose gateway label another owner set is not admitted: its routes count for nothing",
			route:  Route{Kind: KindHTTPRoute, Namespace: "cozy-dashboard", Name: "a", ParentRefs: []ParentRef{{Namespace: "tenant-root", Name: "cozystack"}}, Hostnames: []string{"a.example.org"}},
			nss:    []Namespace{{Name: "cozy-dashboard", Labels: map[string]string{LabelNamespaceGateway: "tenant-other"}}},
		},
		"NoHostnames": {
			reason: "A route without hostnames claims nothing",
			route:  routeTo("tenant-root", "a"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := compose(t, spec, []Route{tc.route}, tc.nss).Hostnames
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nstatus.hostnames: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestHTTP01(t *testing.T) {
	got := compose(t, v1alpha1.TenantGatewaySpec{Apex: "foo.example.com", TLSPassthroughServices: []v1alpha1.DNSLabel{"api"}},
		[]Route{routeTo("tenant-root", "harbor", "harbor.foo.example.com", "api.foo.example.com", "*.foo.example.com", "shop.example.net")}, nil)
	want := view{
		Listeners: []string{
			httpLine,
			"https-harbor-760d5a8a 443/HTTPS harbor.foo.example.com pin=tenant-root " + k443 + " cert=cozystack-harbor-760d5a8a-tls",
			"tls-api 443/TLS api.foo.example.com label=tenant-root names=tenant-root " + kTLS + " Passthrough",
		},
		Certificates: []string{"cozystack-harbor-760d5a8a-tls secret=cozystack-harbor-760d5a8a-tls harbor.foo.example.com"},
		Hostnames: []string{
			"*.foo.example.com HTTPRoute/tenant-root/harbor Invalid",
			// The TLS passthrough listener takes api.foo.example.com; an
			// HTTPRoute cannot be served there.
			"api.foo.example.com HTTPRoute/tenant-root/harbor NoMatchingParent",
			"harbor.foo.example.com HTTPRoute/tenant-root/harbor Listening",
			"shop.example.net HTTPRoute/tenant-root/harbor OutsideApex",
		},
		Keys: []string{"gateway", "issuer", "certificate-https-harbor-760d5a8a", "redirect"},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("http01: -want, +got:\n%s", diff)
	}
}

func TestWildcardModes(t *testing.T) {
	nss := []Namespace{labelled("tenant-root", "example.org"), labelled("tenant-bob", "bob.example.org"), labelled("tenant-alice", "alice.example.org"), labelled("tenant-acme", "customer1.example"), labelled("tenant-alice2", "alice.example.org")}
	routes := []Route{
		routeTo("tenant-root", "www", "www.example.org", "*.example.org"),
		routeTo("tenant-alice", "harbor", "harbor.alice.example.org"),
		routeTo("tenant-acme", "shop", "shop.customer1.example"),
	}
	hostnames := func(covered string) []string {
		return []string{
			"*.example.org HTTPRoute/tenant-root/www Covered",
			"harbor.alice.example.org HTTPRoute/tenant-alice/harbor Covered",
			"shop.customer1.example HTTPRoute/tenant-acme/shop OutsideApex",
			"www.example.org HTTPRoute/tenant-root/www " + covered,
		}
	}
	children := []string{"alice.example.org tenant-alice Listening", "bob.example.org tenant-bob Listening", "customer1.example tenant-acme OutsideApex"}
	lbl := "label=tenant-root"
	// The apex listeners admit, by name, the namespaces delegated the apex;
	// each child's listener admits only its own.
	apexSel := lbl + " names=tenant-root"
	aliceSel, bobSel := lbl+" host=alice.example.org", lbl+" host=bob.example.org"
	kHTTP := "kinds=HTTPRoute"
	cases := map[string]struct {
		spec v1alpha1.TenantGatewaySpec
		want view
	}{
		"DNS01": {
			spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, DNS01: &v1alpha1.DNS01{Cloudflare: &v1alpha1.CloudflareProvider{APITokenSecretRef: v1alpha1.SecretKeySelector{Name: "cf", Key: "token"}}}},
			want: view{
				Listeners: []string{
					httpLine,
					"https 443/HTTPS *.example.org " + apexSel + " " + k443 + " cert=cozystack-gateway-tls",
					"https-apex 443/HTTPS example.org " + apexSel + " " + k443 + " cert=cozystack-gateway-tls",
					"https-child-alice-cf290f3a 443/HTTPS *.alice.example.org " + aliceSel + " " + k443 + " cert=cozystack-gateway-tls",
					"https-child-bob-116343d5 443/HTTPS *.bob.example.org " + bobSel + " " + k443 + " cert=cozystack-gateway-tls",
				},
				Certificates: []string{"cozystack-gateway-tls secret=cozystack-gateway-tls example.org,*.example.org,alice.example.org,*.alice.example.org,bob.example.org,*.bob.example.org"},
				Hostnames:    hostnames("Covered"),
				Children:     children,
				Keys:         []string{"gateway", "issuer", "certificate-wildcard", "redirect"},
			},
		},
		"ExistingSecret": {
			spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeExistingSecret, WildcardSecretRef: &v1alpha1.LocalSecretReference{Name: "wild"}},
			want: view{
				Listeners: []string{
					httpLine,
					"https 443/HTTPS *.example.org " + apexSel + " " + k443 + " cert=wild",
					"https-apex 443/HTTPS example.org " + apexSel + " " + k443 + " cert=wild",
					"https-child-alice-cf290f3a 443/HTTPS *.alice.example.org " + aliceSel + " " + k443 + " cert=wild",
					"https-child-bob-116343d5 443/HTTPS *.bob.example.org " + bobSel + " " + k443 + " cert=wild",
				},
				Hostnames: hostnames("Covered"),
				Children:  children,
				Keys:      []string{"gateway", "redirect"},
			},
		},
		"Edge": {
			spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeEdge, TLSPassthroughServices: []v1alpha1.DNSLabel{"api"}},
			want: view{
				Listeners: []string{
					"edge 80/HTTP *.example.org " + apexSel + " " + kHTTP,
					"edge-apex 80/HTTP example.org " + apexSel + " " + kHTTP,
					"edge-child-alice-cf290f3a 80/HTTP *.alice.example.org " + aliceSel + " " + kHTTP,
					"edge-child-bob-116343d5 80/HTTP *.bob.example.org " + bobSel + " " + kHTTP,
				},
				Hostnames: hostnames("Covered"),
				Children:  children,
				Keys:      []string{"gateway"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := compose(t, tc.spec, routes, nss)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: -want, +got:\n%s", name, diff)
			}
		})
	}
}

func TestConflicts(t *testing.T) {
	nss := []Namespace{labelled("cozy-harbor", "example.org"), labelled("tenant-foo", "example.org"), labelled("tenant-bar", "example.org")}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.TenantGatewaySpec
		routes []Route
		want   view
	}{
		"CozyWinsHTTP01": {
			reason: "A cozy-* namespace beats a tenant; the hostname's own listener is pinned to it",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org"},
			routes: []Route{routeTo("tenant-foo", "a", "harbor.example.org"), routeTo("cozy-harbor", "z", "harbor.example.org")},
			want: view{
				Listeners:    []string{httpLine, "https-harbor-91fb3185 443/HTTPS harbor.example.org pin=cozy-harbor " + k443 + " cert=cozystack-harbor-91fb3185-tls"},
				Certificates: []string{"cozystack-harbor-91fb3185-tls secret=cozystack-harbor-91fb3185-tls harbor.example.org"},
				Hostnames:    []string{"harbor.example.org HTTPRoute/cozy-harbor/z Listening", "harbor.example.org HTTPRoute/tenant-foo/a Conflict"},
				Conflicts:    []string{"harbor.example.org winner=HTTPRoute/cozy-harbor/z losers=HTTPRoute/tenant-foo/a"},
				Keys:         []string{"gateway", "issuer", "certificate-https-harbor-91fb3185", "redirect"},
			},
		},
		"SmallestNamespaceNameAndSameNamespaceNeverLoses": {
			reason: "Between tenants equally delegated the smallest namespace/name wins; every route of the winner's namespace keeps the hostname",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org"},
			routes: []Route{
				routeTo("tenant-foo", "b", "x.example.org"),
				routeTo("tenant-foo", "c", "x.example.org"),
				routeTo("tenant-bar", "z", "x.example.org"),
			},
			want: view{
				Listeners:    []string{httpLine, "https-x-" + Hex8("x.example.org") + " 443/HTTPS x.example.org pin=tenant-bar " + k443 + " cert=cozystack-x-" + Hex8("x.example.org") + "-tls"},
				Certificates: []string{"cozystack-x-" + Hex8("x.example.org") + "-tls secret=cozystack-x-" + Hex8("x.example.org") + "-tls x.example.org"},
				Hostnames: []string{
					"x.example.org HTTPRoute/tenant-bar/z Listening",
					"x.example.org HTTPRoute/tenant-foo/b Conflict",
					"x.example.org HTTPRoute/tenant-foo/c Conflict",
				},
				Conflicts: []string{"x.example.org winner=HTTPRoute/tenant-bar/z losers=HTTPRoute/tenant-foo/b,HTTPRoute/tenant-foo/c"},
				Keys:      []string{"gateway", "issuer", "certificate-https-x-" + Hex8("x.example.org"), "redirect"},
			},
		},
		"DNS01PinsAndApex": {
			reason: "In a wildcard mode a contested hostname gets an extra exact listener pinned to the winner; a contested apex pins https-apex itself",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeExistingSecret, WildcardSecretRef: &v1alpha1.LocalSecretReference{Name: "wild"}},
			routes: []Route{
				routeTo("tenant-foo", "a", "harbor.example.org", "example.org"),
				routeTo("cozy-harbor", "h", "harbor.example.org", "example.org"),
				routeTo("tenant-foo", "b", "only.example.org"),
			},
			want: view{
				Listeners: []string{
					httpLine,
					"https 443/HTTPS *.example.org label=tenant-root names=cozy-harbor,tenant-bar,tenant-foo,tenant-root " + k443 + " cert=wild",
					"https-apex 443/HTTPS example.org pin=cozy-harbor " + k443 + " cert=wild",
					"https-harbor-91fb3185 443/HTTPS harbor.example.org pin=cozy-harbor " + k443 + " cert=wild",
				},
				Hostnames: []string{
					"example.org HTTPRoute/cozy-harbor/h Covered",
					"example.org HTTPRoute/tenant-foo/a Conflict",
					"harbor.example.org HTTPRoute/cozy-harbor/h Covered",
					"harbor.example.org HTTPRoute/tenant-foo/a Conflict",
					"only.example.org HTTPRoute/tenant-foo/b Covered",
				},
				Conflicts: []string{
					"example.org winner=HTTPRoute/cozy-harbor/h losers=HTTPRoute/tenant-foo/a",
					"harbor.example.org winner=HTTPRoute/cozy-harbor/h losers=HTTPRoute/tenant-foo/a",
				},
				Keys: []string{"gateway", "redirect"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := compose(t, tc.spec, tc.routes, nss)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCiliumKinds: a class implemented by Cilium gets HTTPRoute and TLSRoute
// on every port-443 listener (Cilium keeps HTTPS and passthrough listeners of
// one port apart only so); any other class the kinds each protocol serves.
func TestCiliumKinds(t *testing.T) {
	spec := v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeExistingSecret, WildcardSecretRef: &v1alpha1.LocalSecretReference{Name: "w"}, TLSPassthroughServices: []v1alpha1.DNSLabel{"api"}}
	for name, tc := range map[string]struct {
		class      *Class
		https, tls string
	}{
		"Cilium":       {class: &Class{Name: "cilium", ControllerName: CiliumControllerName}, https: "kinds=HTTPRoute,TLSRoute", tls: "kinds=HTTPRoute,TLSRoute"},
		"EnvoyGateway": {class: &Class{Name: "envoy", ControllerName: "gateway.envoyproxy.io/gatewayclass-controller"}, https: k443, tls: kTLS},
		"NotObserved":  {https: k443, tls: kTLS},
	} {
		t.Run(name, func(t *testing.T) {
			out := run(t, Input{Spec: spec, GatewayClass: tc.class})
			want := []string{
				httpLine,
				"https 443/HTTPS *.example.org label=tenant-root names=tenant-root " + tc.https + " cert=w",
				"https-apex 443/HTTPS example.org label=tenant-root names=tenant-root " + tc.https + " cert=w",
				"tls-api 443/TLS api.example.org label=tenant-root names=tenant-root " + tc.tls + " Passthrough",
			}
			if diff := cmp.Diff(want, viewOf(t, out).Listeners); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}
