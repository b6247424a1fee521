package tgwspec

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

func TestPlatformDNS01(t *testing.T) {
	sel := func(name, k string) v1alpha1.SecretKeySelector { return v1alpha1.SecretKeySelector{Name: name, Key: k} }
	cases := map[string]struct {
		reason string
		in     *v1alpha1.DNS01
		want   *v1alpha1.DNS01
	}{
		"NoSettings": {
			reason: "dns01 with no provider block at all is the reference chart's default: cloudflare with its token Secret",
			want:   &v1alpha1.DNS01{Provider: v1alpha1.DNS01Cloudflare, Cloudflare: &v1alpha1.CloudflareProvider{APITokenSecretRef: sel("cloudflare-api-token-secret", "api-token")}},
		},
		"CloudflareKeyOnly": {
			reason: "a Secret name without a key gets the chart's key, and the operator's name is kept",
			in:     &v1alpha1.DNS01{Cloudflare: &v1alpha1.CloudflareProvider{APITokenSecretRef: sel("cf", "")}},
			want:   &v1alpha1.DNS01{Provider: v1alpha1.DNS01Cloudflare, Cloudflare: &v1alpha1.CloudflareProvider{APITokenSecretRef: sel("cf", "api-token")}},
		},
		"OperatorValuesKept": {
			reason: "values the operator set are never replaced, and the blocks of other providers are dropped",
			in: &v1alpha1.DNS01{Provider: v1alpha1.DNS01DigitalOcean, DigitalOcean: &v1alpha1.DigitalOceanProvider{TokenSecretRef: sel("do", "tok")},
				Cloudflare: &v1alpha1.CloudflareProvider{APITokenSecretRef: sel("cf", "x")}},
			want: &v1alpha1.DNS01{Provider: v1alpha1.DNS01DigitalOcean, DigitalOcean: &v1alpha1.DigitalOceanProvider{TokenSecretRef: sel("do", "tok")}},
		},
		"DigitalOceanDefault": {
			reason: "digitalocean without a block gets the chart's token Secret",
			in:     &v1alpha1.DNS01{Provider: v1alpha1.DNS01DigitalOcean},
			want:   &v1alpha1.DNS01{Provider: v1alpha1.DNS01DigitalOcean, DigitalOcean: &v1alpha1.DigitalOceanProvider{TokenSecretRef: sel("digitalocean-api-token-secret", "access-token")}},
		},
		"Route53NoBlock": {
			reason: "route53's region has no default: the block stays missing, for Validate to name it",
			in:     &v1alpha1.DNS01{Provider: v1alpha1.DNS01Route53},
			want:   &v1alpha1.DNS01{Provider: v1alpha1.DNS01Route53},
		},
		"Route53AmbientCredentials": {
			reason: "route53 without a secret reference keeps relying on ambient credentials: no reference is invented",
			in:     &v1alpha1.DNS01{Provider: v1alpha1.DNS01Route53, Route53: &v1alpha1.Route53Provider{Region: "eu-west-1"}},
			want:   &v1alpha1.DNS01{Provider: v1alpha1.DNS01Route53, Route53: &v1alpha1.Route53Provider{Region: "eu-west-1"}},
		},
		"Route53Key": {
			reason: "route53's secret reference without a key gets the chart's key",
			in: &v1alpha1.DNS01{Provider: v1alpha1.DNS01Route53, Route53: &v1alpha1.Route53Provider{Region: "eu-west-1", AccessKeyID: "AKIA",
				SecretAccessKeySecretRef: &v1alpha1.OptionalSecretKeySelector{Name: "aws"}}},
			want: &v1alpha1.DNS01{Provider: v1alpha1.DNS01Route53, Route53: &v1alpha1.Route53Provider{Region: "eu-west-1", AccessKeyID: "AKIA",
				SecretAccessKeySecretRef: &v1alpha1.OptionalSecretKeySelector{Name: "aws", Key: "secret-access-key"}}},
		},
		"Route53EmptySecretName": {
			reason: "route53 with a secret reference of empty name (the Cozystack chart's rendering of ambient credentials) gets no Secret name invented",
			in: &v1alpha1.DNS01{Provider: v1alpha1.DNS01Route53, Route53: &v1alpha1.Route53Provider{Region: "eu-west-1",
				SecretAccessKeySecretRef: &v1alpha1.OptionalSecretKeySelector{}}},
			want: &v1alpha1.DNS01{Provider: v1alpha1.DNS01Route53, Route53: &v1alpha1.Route53Provider{Region: "eu-west-1",
				SecretAccessKeySecretRef: &v1alpha1.OptionalSecretKeySelector{}}},
		},
		"RFC2136Key": {
			reason: "rfc2136's TSIG Secret without a key gets the chart's key; nameserver and key name have no default",
			in: &v1alpha1.DNS01{Provider: v1alpha1.DNS01RFC2136, RFC2136: &v1alpha1.RFC2136Provider{Nameserver: "10.0.0.53:53", TSIGKeyName: "acme",
				TSIGSecretSecretRef: sel("tsig", "")}},
			want: &v1alpha1.DNS01{Provider: v1alpha1.DNS01RFC2136, RFC2136: &v1alpha1.RFC2136Provider{Nameserver: "10.0.0.53:53", TSIGKeyName: "acme",
				TSIGSecretSecretRef: sel("tsig", "tsig-secret-key")}},
		},
		"UnsupportedProvider": {
			reason: "an unsupported provider comes back alone, for the caller to refuse with the allowed list",
			in:     &v1alpha1.DNS01{Provider: "gandi", Cloudflare: &v1alpha1.CloudflareProvider{}},
			want:   &v1alpha1.DNS01{Provider: "gandi"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := tc.in.DeepCopy()
			if diff := cmp.Diff(tc.want, PlatformDNS01(tc.in)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(in, tc.in); diff != "" {
				t.Errorf("PlatformDNS01 changed its argument:\n%s", diff)
			}
		})
	}
}
