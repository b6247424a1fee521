package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

func TestRedirectObject(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     Input
		want   *gwapiv1.HTTPRoute
	}{
		"RootGateway": {
			reason: "The redirect is <tgw>-http-redirect in the TenantGateway's namespace",
			in:     Input{Name: "cozystack", Namespace: "tenant-root"},
			want:   wantRedirect("tenant-root", "cozystack-http-redirect", "cozystack"),
		},
		"AnotherTenant": {
			reason: "The parentRef names the TenantGateway's own Gateway, in the route's namespace (no namespace set)",
			in:     Input{Name: "edge", Namespace: "tenant-alice"},
			want:   wantRedirect("tenant-alice", "edge-http-redirect", "edge"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, redirectObject(&tc.in)); diff != "" {
				t.Errorf("%s\nredirectObject(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// wantRedirect is the redirect as an operator reads it: on the http
// listener of the TenantGateway's own Gateway only, no hostnames (every
// host); ACME challenge paths match a rule without backends (never
// redirected: only cert-manager's solver route answers them), every other
// path 301 to https.
func wantRedirect(ns, name, tgw string) *gwapiv1.HTTPRoute {
	return &gwapiv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{kube.LabelManagedBy: kube.ManagedBy, kube.LabelTenantGateway: tgw}},
		Spec: gwapiv1.HTTPRouteSpec{
			CommonRouteSpec: gwapiv1.CommonRouteSpec{ParentRefs: []gwapiv1.ParentReference{{
				Group: ptr.To(gwapiv1.Group("gateway.networking.k8s.io")), Kind: ptr.To(gwapiv1.Kind("Gateway")),
				Name: gwapiv1.ObjectName(tgw), SectionName: ptr.To(gwapiv1.SectionName("http")),
			}}},
			Rules: []gwapiv1.HTTPRouteRule{
				{Matches: []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{Type: ptr.To(gwapiv1.PathMatchPathPrefix), Value: ptr.To("/.well-known/acme-challenge")}}}},
				{Filters: []gwapiv1.HTTPRouteFilter{{
					Type:            gwapiv1.HTTPRouteFilterRequestRedirect,
					RequestRedirect: &gwapiv1.HTTPRequestRedirectFilter{Scheme: ptr.To("https"), StatusCode: ptr.To(301)},
				}}},
			},
		},
	}
}
