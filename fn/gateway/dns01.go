package gateway

import (
	cmacme "github.com/cert-manager/cert-manager/pkg/apis/acme/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/tgwspec"
)

// dns01Solvers are the cert-manager DNS-01 solvers of a validated block, by
// provider: one for each provider tgwspec validates.
var dns01Solvers = map[v1alpha1.DNS01ProviderName]func(*v1alpha1.DNS01) *cmacme.ACMEChallengeSolverDNS01{
	v1alpha1.DNS01Cloudflare: func(d *v1alpha1.DNS01) *cmacme.ACMEChallengeSolverDNS01 {
		return &cmacme.ACMEChallengeSolverDNS01{Cloudflare: &cmacme.ACMEIssuerDNS01ProviderCloudflare{APIToken: secretKey(&d.Cloudflare.APITokenSecretRef)}}
	},
	v1alpha1.DNS01Route53: func(d *v1alpha1.DNS01) *cmacme.ACMEChallengeSolverDNS01 {
		r := &cmacme.ACMEIssuerDNS01ProviderRoute53{Region: d.Route53.Region, AccessKeyID: d.Route53.AccessKeyID}
		if ref := tgwspec.Route53Secret(d.Route53); ref != nil {
			r.SecretAccessKey = cmmeta.SecretKeySelector{LocalObjectReference: cmmeta.LocalObjectReference{Name: ref.Name}, Key: ref.Key}
		}
		return &cmacme.ACMEChallengeSolverDNS01{Route53: r}
	},
	v1alpha1.DNS01DigitalOcean: func(d *v1alpha1.DNS01) *cmacme.ACMEChallengeSolverDNS01 {
		return &cmacme.ACMEChallengeSolverDNS01{DigitalOcean: &cmacme.ACMEIssuerDNS01ProviderDigitalOcean{Token: *secretKey(&d.DigitalOcean.TokenSecretRef)}}
	},
	v1alpha1.DNS01RFC2136: func(d *v1alpha1.DNS01) *cmacme.ACMEChallengeSolverDNS01 {
		return &cmacme.ACMEChallengeSolverDNS01{RFC2136: &cmacme.ACMEIssuerDNS01ProviderRFC2136{
			Nameserver:    d.RFC2136.Nameserver,
			TSIGKeyName:   d.RFC2136.TSIGKeyName,
			TSIGAlgorithm: d.RFC2136.TSIGAlgorithm,
			TSIGSecret:    *secretKey(&d.RFC2136.TSIGSecretSecretRef),
		}}
	},
}

// dns01Solver copies the provider block of the spec; Validate has checked
// that the block named by the provider is present.
func dns01Solver(d *v1alpha1.DNS01) cmacme.ACMEChallengeSolver {
	return cmacme.ACMEChallengeSolver{DNS01: dns01Solvers[d.Provider](d)}
}

func secretKey(s *v1alpha1.SecretKeySelector) *cmmeta.SecretKeySelector {
	return &cmmeta.SecretKeySelector{LocalObjectReference: cmmeta.LocalObjectReference{Name: s.Name}, Key: s.Key}
}
