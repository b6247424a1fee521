package envoy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	tgwv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// solverRoute is the HTTPRoute cert-manager's HTTP-01 solver makes for a
// challenge of host: in the Issuer's namespace, on the Gateway's http
// listener, the exact challenge path, the solver pod's Service behind it.
func solverRoute(ns, tgw, host, token, svc string) gwapiv1.HTTPRoute {
	port := gwapiv1.PortNumber(8089)
	return gwapiv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: gwapiv1.GroupVersion.String(), Kind: kindHTTPRoute},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc, Labels: map[string]string{"acme.cert-manager.io/http01-solver": "true"}},
		Spec: gwapiv1.HTTPRouteSpec{
			CommonRouteSpec: gwapiv1.CommonRouteSpec{ParentRefs: []gwapiv1.ParentReference{{
				Name: gwapiv1.ObjectName(tgw), SectionName: ptr.To(gwapiv1.SectionName(gateway.ListenerHTTP)),
			}}},
			Hostnames: []gwapiv1.Hostname{gwapiv1.Hostname(host)},
			Rules: []gwapiv1.HTTPRouteRule{{
				Matches: []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{
					Type: ptr.To(gwapiv1.PathMatchExact), Value: ptr.To(gateway.ACMEChallengePath + "/" + token),
				}}},
				BackendRefs: []gwapiv1.HTTPBackendRef{{BackendRef: gwapiv1.BackendRef{BackendObjectReference: gwapiv1.BackendObjectReference{
					Name: gwapiv1.ObjectName(svc), Port: &port,
				}}}},
			}},
		},
	}
}

// TestAttackChallengeThroughTheRedirect: alice, a tenant of an http01
// Gateway, wants certificates for her names from an ACME account of her
// own, outside the platform's order bounds. Her routes answer every path of
// her names on 443; if port 80 redirected a challenge path to https, the CA
// would follow it and her route would answer the challenge. What must hold,
// judged by Envoy Gateway's translator: a challenge path on port 80 is
// never redirected; the token cert-manager's solver route serves reaches
// that solver only, and any other challenge path of a tenant name reaches
// no backend at all; every other path still redirects to https.
func TestAttackChallengeThroughTheRedirect(t *testing.T) {
	spec := tgwv1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: tgwv1alpha1.CertModeHTTP01, IssuerName: "letsencrypt-prod"}
	nss := []gateway.Namespace{tenantNS("tenant-root", "example.org"), tenantNS("tenant-alice", "alice.example.org")}
	routes := []gateway.Route{
		tenantRoute("tenant-alice", "shop", "shop.alice.example.org"),
		tenantRoute("tenant-alice", "www", "www.alice.example.org"),
	}
	_, s := composeScenario(t, gateway.Input{Spec: spec, Namespaces: nss, Routes: routes})
	s.HTTPRoutes = append(s.HTTPRoutes, solverRoute("tenant-root", "cozystack", "shop.alice.example.org", "t0ken", "cm-acme-http-solver-shop"))
	r := translateScenario(t, s)

	type answer struct {
		Redirect *Redirect
		Backends []string
	}
	cases := map[string]struct {
		host, path string
		want       answer
	}{
		"SolverToken":         {host: "shop.alice.example.org", path: gateway.ACMEChallengePath + "/t0ken", want: answer{Backends: []string{"tenant-root/cm-acme-http-solver-shop:8089"}}},
		"OtherToken":          {host: "shop.alice.example.org", path: gateway.ACMEChallengePath + "/hers"},
		"NameWithoutASolver":  {host: "www.alice.example.org", path: gateway.ACMEChallengePath + "/hers"},
		"ChallengeDirectory":  {host: "www.alice.example.org", path: gateway.ACMEChallengePath},
		"EveryOtherPathStill": {host: "www.alice.example.org", path: "/", want: answer{Redirect: &Redirect{Scheme: "https", Code: 301}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rt, b, err := r.RouteFor(80, tc.host, tc.path)
			if err != nil {
				// No route at all (404) is as good as one without backends.
				rt, b = Route{}, nil
			}
			if diff := cmp.Diff(tc.want, answer{Redirect: rt.Redirect, Backends: b}); diff != "" {
				t.Errorf("http://%s%s on port 80 (route %s), -want +got:\n%s", tc.host, tc.path, rt.Name, diff)
			}
		})
	}
}
