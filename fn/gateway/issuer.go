package gateway

import (
	cmacme "github.com/cert-manager/cert-manager/pkg/apis/acme/v1"
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// ACME directory URLs of the supported issuers.
const (
	ACMEServerProd  = "https://acme-v02.api.letsencrypt.org/directory"
	ACMEServerStage = "https://acme-staging-v02.api.letsencrypt.org/directory"
)

// acmeIssuer is the ACME server of the Issuer: a built-in issuer's
// directory, or everything spec.acme defines. Validate has already refused
// a spec.acme beside a built-in name, and a name of its own without one.
func acmeIssuer(in *Input) *cmacme.ACMEIssuer {
	a := &cmacme.ACMEIssuer{
		Server:     ACMEServerProd,
		PrivateKey: cmmeta.SecretKeySelector{LocalObjectReference: cmmeta.LocalObjectReference{Name: AccountKeySecretName(in.Name)}},
	}
	s := in.Spec.ACME
	switch {
	case s != nil:
		a.Server, a.Email = s.Server, s.Email
		if s.CABundle != "" {
			a.CABundle = []byte(s.CABundle)
		}
		if e := s.ExternalAccountBinding; e != nil {
			a.ExternalAccountBinding = &cmacme.ACMEExternalAccountBinding{KeyID: e.KeyID, Key: *secretKey(e.KeySecretRef)}
		}
	case in.Spec.IssuerName == v1alpha1.IssuerLetsEncryptStage:
		a.Server = ACMEServerStage
	}
	return a
}

// issuerObject is the per-tenant ACME Issuer: its own account key and exactly
// one solver, HTTP-01 through the Gateway's http listener or the DNS-01
// provider of the spec.
func issuerObject(in *Input) *cmv1.Issuer {
	solver := http01Solver(in)
	if in.Spec.CertMode == v1alpha1.CertModeDNS01 {
		solver = dns01Solver(in.Spec.DNS01)
	}
	acme := acmeIssuer(in)
	acme.Solvers = []cmacme.ACMEChallengeSolver{solver}
	return &cmv1.Issuer{
		TypeMeta: metav1.TypeMeta{APIVersion: cmv1.SchemeGroupVersion.String(), Kind: cmv1.IssuerKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      IssuerName(in.Name),
			Namespace: in.Namespace,
			Labels:    commonLabels(in),
		},
		Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{ACME: acme}},
	}
}

func http01Solver(in *Input) cmacme.ACMEChallengeSolver {
	return cmacme.ACMEChallengeSolver{HTTP01: &cmacme.ACMEChallengeSolverHTTP01{
		GatewayHTTPRoute: &cmacme.ACMEChallengeSolverHTTP01GatewayHTTPRoute{
			ParentRefs: []gwapiv1.ParentReference{gatewayParentRef(in, ListenerHTTP)},
		},
	}}
}

// gatewayParentRef names a listener of this TenantGateway's Gateway, with its
// namespace, for a route in any namespace.
func gatewayParentRef(in *Input, section string) gwapiv1.ParentReference {
	return gwapiv1.ParentReference{
		Group:       ptr.To(gwapiv1.Group(gwapiv1.GroupName)),
		Kind:        ptr.To(gwapiv1.Kind("Gateway")),
		Namespace:   ptr.To(gwapiv1.Namespace(in.Namespace)),
		Name:        gwapiv1.ObjectName(in.Name),
		SectionName: ptr.To(gwapiv1.SectionName(section)),
	}
}
