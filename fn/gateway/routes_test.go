package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

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
			nss:    []Namespace{{Name: "tenant-eve", Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-other"}}},
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
			nss:    []Namespace{{Name: "cozy-dashboard", Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-other"}}},
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
