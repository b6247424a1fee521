package gateway

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// redirectObject sends every plain-HTTP request on the http listener to
// https with a 301. It has no hostnames, so it matches every host; the ACME
// challenge routes win over it by their more specific path.
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
			Rules: []gwapiv1.HTTPRouteRule{{
				Filters: []gwapiv1.HTTPRouteFilter{{
					Type: gwapiv1.HTTPRouteFilterRequestRedirect,
					RequestRedirect: &gwapiv1.HTTPRequestRedirectFilter{
						Scheme:     ptr.To("https"),
						StatusCode: ptr.To(301),
					},
				}},
			}},
		},
	}
}
