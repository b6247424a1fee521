package gateway

import (
	"os"
	"testing"

	cmacme "github.com/cert-manager/cert-manager/pkg/apis/acme/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/tgwspec"
)

// testCABundle is a self-signed ed25519 CA certificate, as a platform's own
// ACME directory would be verified with (the one examples/acme-server carries).
var testCABundle = mustReadFile("../../test/testdata/acme-ca.pem")

func mustReadFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestDNS01Issuer(t *testing.T) {
	key := func(name, k string) cmmeta.SecretKeySelector {
		return cmmeta.SecretKeySelector{LocalObjectReference: cmmeta.LocalObjectReference{Name: name}, Key: k}
	}
	sel := func(name, k string) v1alpha1.SecretKeySelector { return v1alpha1.SecretKeySelector{Name: name, Key: k} }
	cases := map[string]struct {
		reason string
		dns01  *v1alpha1.DNS01
		issuer v1alpha1.IssuerName
		server string
		want   *cmacme.ACMEChallengeSolverDNS01
	}{
		"Cloudflare": {
			reason: "Cloudflare's API token reference is copied",
			dns01:  &v1alpha1.DNS01{Cloudflare: &v1alpha1.CloudflareProvider{APITokenSecretRef: sel("cf", "token")}},
			server: ACMEServerProd,
			want:   &cmacme.ACMEChallengeSolverDNS01{Cloudflare: &cmacme.ACMEIssuerDNS01ProviderCloudflare{APIToken: ptr.To(key("cf", "token"))}},
		},
		"Route53AmbientCredentials": {
			reason: "route53 without a secret reference relies on ambient credentials: no reference is written",
			dns01:  &v1alpha1.DNS01{Provider: v1alpha1.DNS01Route53, Route53: &v1alpha1.Route53Provider{Region: "eu-west-1"}},
			issuer: v1alpha1.IssuerLetsEncryptStage,
			server: ACMEServerStage,
			want:   &cmacme.ACMEChallengeSolverDNS01{Route53: &cmacme.ACMEIssuerDNS01ProviderRoute53{Region: "eu-west-1"}},
		},
		"Route53ChartAmbientCredentials": {
			reason: "route53 as the Cozystack gateway chart renders ambient credentials (an empty access key ID, a secret reference of empty name): no Secret reference is written",
			dns01: &v1alpha1.DNS01{Provider: v1alpha1.DNS01Route53, Route53: &v1alpha1.Route53Provider{
				Region: "eu-west-1", SecretAccessKeySecretRef: &v1alpha1.OptionalSecretKeySelector{Key: "secret-access-key"},
			}},
			server: ACMEServerProd,
			want:   &cmacme.ACMEChallengeSolverDNS01{Route53: &cmacme.ACMEIssuerDNS01ProviderRoute53{Region: "eu-west-1"}},
		},
		"Route53Keys": {
			reason: "route53 with an access key copies the key ID and the secret reference",
			dns01: &v1alpha1.DNS01{Provider: v1alpha1.DNS01Route53, Route53: &v1alpha1.Route53Provider{
				Region: "us-east-1", AccessKeyID: "AKIA", SecretAccessKeySecretRef: &v1alpha1.OptionalSecretKeySelector{Name: "aws", Key: "secret"},
			}},
			server: ACMEServerProd,
			want: &cmacme.ACMEChallengeSolverDNS01{Route53: &cmacme.ACMEIssuerDNS01ProviderRoute53{
				Region: "us-east-1", AccessKeyID: "AKIA", SecretAccessKey: key("aws", "secret"),
			}},
		},
		"DigitalOcean": {
			reason: "DigitalOcean's token reference is copied",
			dns01:  &v1alpha1.DNS01{Provider: v1alpha1.DNS01DigitalOcean, DigitalOcean: &v1alpha1.DigitalOceanProvider{TokenSecretRef: sel("do", "token")}},
			server: ACMEServerProd,
			want:   &cmacme.ACMEChallengeSolverDNS01{DigitalOcean: &cmacme.ACMEIssuerDNS01ProviderDigitalOcean{Token: key("do", "token")}},
		},
		"RFC2136DefaultAlgorithm": {
			reason: "rfc2136 gets HMACSHA256 when no algorithm is set",
			dns01: &v1alpha1.DNS01{Provider: v1alpha1.DNS01RFC2136, RFC2136: &v1alpha1.RFC2136Provider{
				Nameserver: "10.0.0.53:53", TSIGKeyName: "acme", TSIGSecretSecretRef: sel("tsig", "secret"),
			}},
			server: ACMEServerProd,
			want: &cmacme.ACMEChallengeSolverDNS01{RFC2136: &cmacme.ACMEIssuerDNS01ProviderRFC2136{
				Nameserver: "10.0.0.53:53", TSIGKeyName: "acme", TSIGAlgorithm: "HMACSHA256", TSIGSecret: key("tsig", "secret"),
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := Input{Name: "cozystack", Namespace: "tenant-root", Spec: tgwspec.Defaulted(v1alpha1.TenantGatewaySpec{
				Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, IssuerName: tc.issuer, DNS01: tc.dns01,
			})}
			if errs := tgwspec.Validate(in.Spec); len(errs) > 0 {
				t.Fatalf("test spec is invalid: %v", errs)
			}
			acme := issuerObject(&in).Spec.ACME
			if acme.Server != tc.server {
				t.Errorf("%s\nserver: want %s, got %s", tc.reason, tc.server, acme.Server)
			}
			if len(acme.Solvers) != 1 {
				t.Fatalf("want exactly one solver, got %d", len(acme.Solvers))
			}
			if diff := cmp.Diff(tc.want, acme.Solvers[0].DNS01); diff != "" {
				t.Errorf("%s\ndns01 solver: -want, +got:\n%s", tc.reason, diff)
			}
			if acme.PrivateKey.Name != "cozystack-acme-account" {
				t.Errorf("account key Secret: want cozystack-acme-account, got %s", acme.PrivateKey.Name)
			}
		})
	}
}

func TestACMEIssuer(t *testing.T) {
	account := cmmeta.SecretKeySelector{LocalObjectReference: cmmeta.LocalObjectReference{Name: "cozystack-acme-account"}}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.TenantGatewaySpec
		want   cmacme.ACMEIssuer
	}{
		"Default": {
			reason: "No issuer named: Let's Encrypt's production directory, nothing else",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org"},
			want:   cmacme.ACMEIssuer{Server: ACMEServerProd, PrivateKey: account},
		},
		"Staging": {
			reason: "letsencrypt-stage is Let's Encrypt's staging directory",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", IssuerName: v1alpha1.IssuerLetsEncryptStage},
			want:   cmacme.ACMEIssuer{Server: ACMEServerStage, PrivateKey: account},
		},
		"OwnServer": {
			reason: "A server of its own carries its directory, its CA bundle as bytes, its binding and its contact into cert-manager's fields",
			spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", IssuerName: "corp-ca", ACME: &v1alpha1.ACMEServer{
				Server: "https://acme.corp.example/directory", CABundle: testCABundle, Email: "ops@example.org",
				ExternalAccountBinding: &v1alpha1.ExternalAccountBinding{KeyID: "kid-1", KeySecretRef: &v1alpha1.SecretKeySelector{Name: "corp-ca-eab", Key: "hmac"}},
			}},
			want: cmacme.ACMEIssuer{
				Server: "https://acme.corp.example/directory", CABundle: []byte(testCABundle), Email: "ops@example.org", PrivateKey: account,
				ExternalAccountBinding: &cmacme.ACMEExternalAccountBinding{KeyID: "kid-1", Key: cmmeta.SecretKeySelector{LocalObjectReference: cmmeta.LocalObjectReference{Name: "corp-ca-eab"}, Key: "hmac"}},
			},
		},
		"OwnServerMinimal": {
			reason: "A server of its own with only its directory: no CA bundle (the system roots), no binding, no contact",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", IssuerName: "pebble", ACME: &v1alpha1.ACMEServer{Server: "https://pebble.test:14000/dir"}},
			want:   cmacme.ACMEIssuer{Server: "https://pebble.test:14000/dir", PrivateKey: account},
		},
		"OwnServerInDNS01": {
			reason: "dns01 Issuers talk to the server of their own too",
			spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, IssuerName: "corp-ca",
				ACME:  &v1alpha1.ACMEServer{Server: "https://acme.corp.example/directory", Email: "ops@example.org"},
				DNS01: &v1alpha1.DNS01{Cloudflare: &v1alpha1.CloudflareProvider{APITokenSecretRef: v1alpha1.SecretKeySelector{Name: "cf", Key: "token"}}}},
			want: cmacme.ACMEIssuer{Server: "https://acme.corp.example/directory", Email: "ops@example.org", PrivateKey: account},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := Input{Name: "cozystack", Namespace: "tenant-root", Spec: tgwspec.Defaulted(tc.spec)}
			if errs := tgwspec.Validate(in.Spec); len(errs) > 0 {
				t.Fatalf("test spec is invalid: %v", errs)
			}
			acme := issuerObject(&in).Spec.ACME
			if len(acme.Solvers) != 1 {
				t.Fatalf("want exactly one solver, got %d", len(acme.Solvers))
			}
			got := *acme
			got.Solvers = nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nIssuer spec.acme without solvers: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestDNS01SolverOfEveryProvider(t *testing.T) {
	for _, p := range v1alpha1.DNS01ProviderNames {
		if dns01Solvers[p] == nil {
			t.Errorf("DNS-01 provider %s, which tgwspec validates, has no cert-manager solver", p)
		}
	}
}
