package gateway

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ACMEChallengePath is the path under which an ACME CA fetches HTTP-01
// challenge responses (RFC 8555, section 8.3). Neither cert-manager nor
// golang.org/x/crypto/acme exports it as a constant (both build it in a
// function), so it is spelled here once. A Gateway API PathPrefix matches
// it element by element: the path itself and everything under it.
const ACMEChallengePath = "/.well-known/acme-challenge"

// redirectObject sends every plain-HTTP request on the http listener to
// https with a 301, but for ACME HTTP-01 challenge paths. It has no
// hostnames, so it matches every host. A CA follows redirects while it
// validates a challenge, so a redirected challenge path would reach
// whatever route answers the name on 443, a tenant's own included: a
// tenant could then pass HTTP-01 for its names with an ACME account of its
// own, outside the platform's order bounds. Its first rule matches the
// challenge prefix and has no backends, so such a request is answered by
// the implementation (500 on Envoy Gateway) unless the solver route
// cert-manager creates for the name (an exact path, the name as its
// hostname, on this listener) takes it first.
func redirectObject(in *Input) *gwapiv1.HTTPRoute {
	group := gwapiv1.Group(gwapiv1.GroupName)
	kind := gwapiv1.Kind("Gateway")
	section := gwapiv1.SectionName(ListenerHTTP)
	return &gwapiv1.HTTPRoute{
		TypeMeta: metav1.TypeMeta{APIVersion: gwapiv1.GroupVersion.String(), Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      RedirectName(in.Name),
			Namespace: in.Namespace,
			Labels:    commonLabels(in),
		},
		Spec: gwapiv1.HTTPRouteSpec{
			CommonRouteSpec: gwapiv1.CommonRouteSpec{ParentRefs: []gwapiv1.ParentReference{{
				Group:       &group,
				Kind:        &kind,
				Name:        gwapiv1.ObjectName(in.Name),
				SectionName: &section,
			}}},
			Rules: []gwapiv1.HTTPRouteRule{
				{
					Matches: []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{
						Type:  ptr.To(gwapiv1.PathMatchPathPrefix),
						Value: ptr.To(ACMEChallengePath),
					}}},
				},
				{
					Filters: []gwapiv1.HTTPRouteFilter{{
						Type: gwapiv1.HTTPRouteFilterRequestRedirect,
						RequestRedirect: &gwapiv1.HTTPRequestRedirectFilter{
							Scheme:     ptr.To("https"),
							StatusCode: ptr.To(301),
						},
					}},
				},
			},
		},
	}
}
