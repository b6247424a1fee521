package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

func TestValidate(t *testing.T) {
	secret := v1alpha1.SecretKeySelector{Name: "dns", Key: "token"}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.TenantGatewaySpec
		want   []string
	}{
		"MinimalIsValid": {
			reason: "An apex alone is a complete http01 spec once defaulted",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org"},
		},
		"MissingApex": {
			reason: "The apex is required",
			spec:   v1alpha1.TenantGatewaySpec{},
			want:   []string{"spec.apex: Required value: a lowercase DNS name such as example.org"},
		},
		"UppercaseApex": {
			reason: "The apex must be lowercase",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "Example.org"},
			want:   []string{`spec.apex: Invalid value: "Example.org": must be a lowercase DNS name (labels of a-z, 0-9 and '-', separated by dots)`},
		},
		"WildcardApex": {
			reason: "The apex is a concrete name",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "*.example.org"},
			want:   []string{`spec.apex: Invalid value: "*.example.org": must be a concrete DNS name, not a wildcard`},
		},
		"UnknownCertMode": {
			reason: "An unknown mode names the allowed modes",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: "tls-alpn01"},
			want:   []string{`spec.certMode: Unsupported value: "tls-alpn01": supported values: "http01", "dns01", "existingSecret", "edge"`},
		},
		"UnknownIssuer": {
			reason: "An unknown issuer names the allowed issuers",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", IssuerName: "zerossl"},
			want:   []string{`spec.issuerName: Unsupported value: "zerossl": supported values: "letsencrypt-prod", "letsencrypt-stage"`},
		},
		"OrdersPerBranchOutOfRange": {
			reason: "The ACME order budget names its range",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", ACMEOrdersPerBranch: ptr.To[int32](-1)},
			want:   []string{`spec.acmeOrdersPerBranch: Invalid value: -1: must be between 0 (no bound) and 1000`},
		},
		"UnknownIssuerIgnoredInEdge": {
			reason: "Edge mode reads no issuer settings",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeEdge, IssuerName: "zerossl"},
		},
		"DNS01WithoutBlock": {
			reason: "dns01 needs its provider settings",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01},
			want:   []string{`spec.dns01: Required value: the DNS-01 provider is required when spec.certMode is dns01 (spec.dns01.provider: one of "cloudflare", "route53", "digitalocean", "rfc2136", with the block of that name)`},
		},
		"DNS01ProviderBlockMissing": {
			reason: "The block named by provider is required",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, DNS01: &v1alpha1.DNS01{Provider: v1alpha1.DNS01Route53}},
			want:   []string{"spec.dns01.route53: Required value: spec.dns01.provider is route53, so the route53 block is required"},
		},
		"DNS01UnknownProvider": {
			reason: "An unknown provider names the allowed providers",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, DNS01: &v1alpha1.DNS01{Provider: "gandi"}},
			want:   []string{`spec.dns01.provider: Unsupported value: "gandi": supported values: "cloudflare", "route53", "digitalocean", "rfc2136"`},
		},
		"DNS01CloudflareDefaulted": {
			reason: "The provider defaults to cloudflare",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, DNS01: &v1alpha1.DNS01{Cloudflare: &v1alpha1.CloudflareProvider{APITokenSecretRef: secret}}},
		},
		"DNS01RFC2136Incomplete": {
			reason: "rfc2136 needs a nameserver, a key name and a secret",
			spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, DNS01: &v1alpha1.DNS01{
				Provider: v1alpha1.DNS01RFC2136, RFC2136: &v1alpha1.RFC2136Provider{},
			}},
			want: []string{
				"spec.dns01.rfc2136.nameserver: Required value: host:port of the authoritative DNS server",
				"spec.dns01.rfc2136.tsigKeyName: Required value: the name of the TSIG key",
				"spec.dns01.rfc2136.tsigSecretSecretRef.name: Required value: the name of a Secret in the TenantGateway's namespace",
				"spec.dns01.rfc2136.tsigSecretSecretRef.key: Required value: the key within the Secret",
			},
		},
		"DNS01Route53WithoutRegion": {
			reason: "route53 needs a region",
			spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, DNS01: &v1alpha1.DNS01{
				Provider: v1alpha1.DNS01Route53, Route53: &v1alpha1.Route53Provider{},
			}},
			want: []string{"spec.dns01.route53.region: Required value: the AWS region of the Route53 API"},
		},
		"ExistingSecretWithoutName": {
			reason: "existingSecret needs the Secret's name",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeExistingSecret, WildcardSecretRef: &v1alpha1.LocalSecretReference{}},
			want:   []string{"spec.wildcardSecretRef.name: Required value: the wildcard TLS Secret is required when spec.certMode is existingSecret"},
		},
		"DuplicateAttachedNamespace": {
			reason: "Entries of attachedNamespaces are unique",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-harbor", "cozy-harbor"}},
			want:   []string{`spec.attachedNamespaces[1]: Duplicate value: "cozy-harbor"`},
		},
		"InvalidPassthroughService": {
			reason: "Passthrough services are DNS labels",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", TLSPassthroughServices: []v1alpha1.DNSLabel{"api", "VM_Export"}},
			want:   []string{`spec.tlsPassthroughServices[1]: Invalid value: "VM_Export": must be a DNS label: at most 63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range Validate(Defaulted(tc.spec)) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nValidate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestDefaulted(t *testing.T) {
	got := Defaulted(v1alpha1.TenantGatewaySpec{Apex: "example.org", DNS01: &v1alpha1.DNS01{RFC2136: &v1alpha1.RFC2136Provider{}}})
	want := v1alpha1.TenantGatewaySpec{
		Apex:             "example.org",
		CertMode:         v1alpha1.CertModeHTTP01,
		IssuerName:       v1alpha1.IssuerLetsEncryptProd,
		GatewayClassName: "cilium",
		DNS01:            &v1alpha1.DNS01{Provider: v1alpha1.DNS01Cloudflare, RFC2136: &v1alpha1.RFC2136Provider{TSIGAlgorithm: "HMACSHA256"}},
		// The ACME order budget's default, the function's own.
		ACMEOrdersPerBranch: ptr.To[int32](v1alpha1.DefaultACMEOrdersPerBranch),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Defaulted(...): -want, +got:\n%s", diff)
	}
}
