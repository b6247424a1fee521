package tgwspec

import (
	"encoding/base64"
	"encoding/pem"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// testCABundle is a self-signed ed25519 CA certificate, as a platform's own
// ACME directory would be verified with (the one examples/acme-server carries).
var testCABundle = func() string {
	b, err := os.ReadFile("../../test/testdata/acme-ca.pem")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func TestValidate(t *testing.T) {
	secret := v1alpha1.SecretKeySelector{Name: "dns", Key: "token"}
	// acme is a TenantGateway naming its own ACME server, changed by f.
	acme := func(f func(*v1alpha1.ACMEServer)) v1alpha1.TenantGatewaySpec {
		a := &v1alpha1.ACMEServer{Server: "https://acme.corp.example/directory"}
		f(a)
		return v1alpha1.TenantGatewaySpec{Apex: "example.org", IssuerName: "corp-ca", ACME: a}
	}
	keep := func(*v1alpha1.ACMEServer) {}
	bundle := func(b string) func(*v1alpha1.ACMEServer) { return func(a *v1alpha1.ACMEServer) { a.CABundle = b } }
	eab := func(e *v1alpha1.ExternalAccountBinding) func(*v1alpha1.ACMEServer) {
		return func(a *v1alpha1.ACMEServer) { a.ExternalAccountBinding = e }
	}
	email := func(e string) func(*v1alpha1.ACMEServer) { return func(a *v1alpha1.ACMEServer) { a.Email = e } }
	server := func(s string) func(*v1alpha1.ACMEServer) { return func(a *v1alpha1.ACMEServer) { a.Server = s } }
	block := func(typ string, b []byte) string { return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b})) }
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
			reason: "A name that is no built-in issuer, without spec.acme, names the built-ins: the only names supported without it",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", IssuerName: "zerossl"},
			want:   []string{`spec.issuerName: Unsupported value: "zerossl": supported values: "letsencrypt-prod", "letsencrypt-stage"`},
		},
		"OrdersPerBranchOutOfRange": {
			reason: "The ACME order budget names its range",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", ACMEOrdersPerBranch: ptr.To[int32](-1)},
			want:   []string{`spec.acmeOrdersPerBranch: Invalid value: -1: must be between 0 and 1000 (deprecated and ignored: the order quota is the platform setting gateway.certificateOrders)`},
		},
		"UnknownIssuerIgnoredInEdge": {
			reason: "Edge mode reads no issuer settings",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeEdge, IssuerName: "zerossl"},
		},
		"ACMEServerComplete": {
			reason: "A name of its own with an https directory, a PEM CA bundle, both halves of a binding and an address is valid",
			spec: acme(func(a *v1alpha1.ACMEServer) {
				a.CABundle, a.Email = testCABundle, "ops@example.org"
				a.ExternalAccountBinding = &v1alpha1.ExternalAccountBinding{KeyID: "kid-1", KeySecretRef: &v1alpha1.SecretKeySelector{Name: "corp-ca-eab", Key: "hmac"}}
			}),
		},
		"ACMEServerInDNS01": {
			reason: "dns01 reads the ACME server too",
			spec: func() v1alpha1.TenantGatewaySpec {
				s := acme(server("http://acme.corp.example/directory"))
				s.CertMode, s.DNS01 = v1alpha1.CertModeDNS01, &v1alpha1.DNS01{Cloudflare: &v1alpha1.CloudflareProvider{APITokenSecretRef: secret}}
				return s
			}(),
			want: []string{`spec.acme.server: Invalid value: "http://acme.corp.example/directory": must be an https:// URL with a host, such as https://acme.example.org/directory: the ACME account's requests and its External Account Binding go there`},
		},
		"ACMEServerIgnoredInExistingSecret": {
			reason: "existingSecret reads no issuer settings, spec.acme included",
			spec: func() v1alpha1.TenantGatewaySpec {
				s := acme(server("http://acme.corp.example/directory"))
				s.CertMode, s.WildcardSecretRef = v1alpha1.CertModeExistingSecret, &v1alpha1.LocalSecretReference{Name: "wild"}
				return s
			}(),
		},
		"ACMEServerBesideBuiltin": {
			reason: "spec.acme under the defaulted letsencrypt-prod would silently lose: refused, asking for a name of its own",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org", ACME: &v1alpha1.ACMEServer{Server: "https://acme.corp.example/directory"}},
			want:   []string{`spec.acme: Forbidden: spec.issuerName is the built-in issuer "letsencrypt-prod", which spec.acme cannot redefine: to use the ACME server of spec.acme, give it a name of its own in spec.issuerName (a DNS label other than "letsencrypt-prod", "letsencrypt-stage")`},
		},
		"ACMEServerNameNotALabel": {
			reason: "The name of an ACME server is a DNS label, as the XRD says",
			spec:   func() v1alpha1.TenantGatewaySpec { s := acme(keep); s.IssuerName = "Corp_CA"; return s }(),
			want:   []string{`spec.issuerName: Invalid value: "Corp_CA": must be a DNS label: at most 63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit`},
		},
		"ACMEServerMissing": {
			reason: "The directory URL is required",
			spec:   acme(server("")),
			want:   []string{"spec.acme.server: Required value: the https:// URL of the ACME directory, such as https://acme.example.org/directory"},
		},
		"ACMEServerWithoutHost": {
			reason: "An https URL needs a host",
			spec:   acme(server("https:///directory")),
			want:   []string{`spec.acme.server: Invalid value: "https:///directory": must be an https:// URL with a host, such as https://acme.example.org/directory: the ACME account's requests and its External Account Binding go there`},
		},
		"ACMEServerNotAURL": {
			reason: "A directory that does not parse as a URL is refused",
			spec:   acme(server("https://acme corp/directory")),
			want:   []string{`spec.acme.server: Invalid value: "https://acme corp/directory": must be an https:// URL with a host, such as https://acme.example.org/directory: the ACME account's requests and its External Account Binding go there`},
		},
		"ACMEServerTooLong": {
			reason: "The directory URL is bounded as the XRD bounds it",
			spec:   acme(server("https://acme.corp.example/" + strings.Repeat("d", 2048))),
			want:   []string{"spec.acme.server: Too long: may not be more than 2048 bytes"},
		},
		"CABundleWithComments": {
			reason: "Text around the PEM blocks, as system bundles carry, is allowed",
			spec:   acme(bundle("# Corp ACME directory CA\n" + testCABundle + "\n" + testCABundle)),
		},
		"CABundleNotPEM": {
			reason: "A CA bundle without a PEM block is refused, and its content is not repeated",
			spec:   acme(bundle("corp-root-ca")),
			want:   []string{"spec.acme.caBundle: Invalid value: must be PEM text holding at least one -----BEGIN CERTIFICATE----- block (the PEM itself, not base64 of it)"},
		},
		"CABundleBase64": {
			reason: "cert-manager's own caBundle is base64 of the PEM; ours is the PEM, and base64 is refused",
			spec:   acme(bundle(base64.StdEncoding.EncodeToString([]byte(testCABundle)))),
			want:   []string{"spec.acme.caBundle: Invalid value: must be PEM text holding at least one -----BEGIN CERTIFICATE----- block (the PEM itself, not base64 of it)"},
		},
		"CABundlePrivateKey": {
			reason: "A key pasted into the bundle is refused, naming the block type and not its content",
			spec:   acme(bundle(testCABundle + block("PRIVATE KEY", []byte("secret key bytes")))),
			want:   []string{`spec.acme.caBundle: Invalid value: PEM block 2 is a "PRIVATE KEY" block: a CA bundle holds only CERTIFICATE blocks`},
		},
		"CABundleCorruptCertificate": {
			reason: "A CERTIFICATE block must hold a certificate",
			spec:   acme(bundle(block("CERTIFICATE", []byte("not DER")))),
			want:   []string{"spec.acme.caBundle: Invalid value: PEM block 1 is not an X.509 certificate: x509: malformed certificate"},
		},
		"CABundleTooLong": {
			reason: "The bundle is bounded as the XRD bounds it",
			spec:   acme(bundle(strings.Repeat(testCABundle, 65536/len(testCABundle)+1))),
			want:   []string{"spec.acme.caBundle: Too long: may not be more than 65536 bytes"},
		},
		"EABKeyIDOnly": {
			reason: "A key ID without its Secret is refused, naming the missing half",
			spec:   acme(eab(&v1alpha1.ExternalAccountBinding{KeyID: "kid-1"})),
			want:   []string{"spec.acme.externalAccountBinding.keySecretRef: Required value: the Secret (name and key) holding the CA's MAC key: an External Account Binding needs both keyID and keySecretRef"},
		},
		"EABSecretOnly": {
			reason: "A Secret without its key ID is refused, naming the missing half",
			spec:   acme(eab(&v1alpha1.ExternalAccountBinding{KeySecretRef: &v1alpha1.SecretKeySelector{Name: "corp-ca-eab", Key: "hmac"}})),
			want:   []string{"spec.acme.externalAccountBinding.keyID: Required value: the key ID the CA gave for the account: an External Account Binding needs both keyID and keySecretRef"},
		},
		"EABEmpty": {
			reason: "An empty binding is missing both halves",
			spec:   acme(eab(&v1alpha1.ExternalAccountBinding{})),
			want: []string{
				"spec.acme.externalAccountBinding.keyID: Required value: the key ID the CA gave for the account: an External Account Binding needs both keyID and keySecretRef",
				"spec.acme.externalAccountBinding.keySecretRef: Required value: the Secret (name and key) holding the CA's MAC key: an External Account Binding needs both keyID and keySecretRef",
			},
		},
		"EABSecretWithoutKey": {
			reason: "The binding's Secret reference names a key",
			spec:   acme(eab(&v1alpha1.ExternalAccountBinding{KeyID: "kid-1", KeySecretRef: &v1alpha1.SecretKeySelector{Name: "corp-ca-eab"}})),
			want:   []string{"spec.acme.externalAccountBinding.keySecretRef.key: Required value: the key within the Secret"},
		},
		"EABKeyIDTooLong": {
			reason: "The key ID is bounded as the XRD bounds it",
			spec:   acme(eab(&v1alpha1.ExternalAccountBinding{KeyID: strings.Repeat("k", 257), KeySecretRef: &v1alpha1.SecretKeySelector{Name: "corp-ca-eab", Key: "hmac"}})),
			want:   []string{"spec.acme.externalAccountBinding.keyID: Too long: may not be more than 256 bytes"},
		},
		"EmailWithDisplayName": {
			reason: "The contact is a bare address",
			spec:   acme(email("Ops <ops@example.org>")),
			want:   []string{`spec.acme.email: Invalid value: "Ops <ops@example.org>": must be a bare email address such as ops@example.org, without a display name or angle brackets`},
		},
		"EmailNotAnAddress": {
			reason: "The contact is an address",
			spec:   acme(email("ops")),
			want:   []string{`spec.acme.email: Invalid value: "ops": must be a bare email address such as ops@example.org, without a display name or angle brackets`},
		},
		"EmailTooLong": {
			reason: "The contact is bounded as the XRD bounds it",
			spec:   acme(email(strings.Repeat("o", 243) + "@example.org")),
			want:   []string{"spec.acme.email: Too long: may not be more than 254 bytes"},
		},
		"EverythingWrongAtOnce": {
			reason: "Every error of the server is reported, not only the first",
			spec: acme(func(a *v1alpha1.ACMEServer) {
				a.Server, a.CABundle, a.Email = "http://acme.corp.example", "x", "ops"
				a.ExternalAccountBinding = &v1alpha1.ExternalAccountBinding{KeyID: "kid-1"}
			}),
			want: []string{
				`spec.acme.server: Invalid value: "http://acme.corp.example": must be an https:// URL with a host, such as https://acme.example.org/directory: the ACME account's requests and its External Account Binding go there`,
				"spec.acme.caBundle: Invalid value: must be PEM text holding at least one -----BEGIN CERTIFICATE----- block (the PEM itself, not base64 of it)",
				"spec.acme.externalAccountBinding.keySecretRef: Required value: the Secret (name and key) holding the CA's MAC key: an External Account Binding needs both keyID and keySecretRef",
				`spec.acme.email: Invalid value: "ops": must be a bare email address such as ops@example.org, without a display name or angle brackets`,
			},
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
		"DNS01Route53SecretWithoutKey": {
			reason: "a route53 Secret name needs its key; an empty name (ambient credentials) needs none",
			spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, DNS01: &v1alpha1.DNS01{
				Provider: v1alpha1.DNS01Route53, Route53: &v1alpha1.Route53Provider{Region: "eu-west-1", SecretAccessKeySecretRef: &v1alpha1.OptionalSecretKeySelector{Name: "aws"}},
			}},
			want: []string{"spec.dns01.route53.secretAccessKeySecretRef.key: Required value: the key within the Secret named by spec.dns01.route53.secretAccessKeySecretRef.name (leave the name empty for ambient credentials)"},
		},
		"DNS01Route53AmbientFromChart": {
			reason: "route53 as the Cozystack gateway chart renders ambient credentials is accepted",
			spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, DNS01: &v1alpha1.DNS01{
				Provider: v1alpha1.DNS01Route53, Route53: &v1alpha1.Route53Provider{Region: "eu-west-1", SecretAccessKeySecretRef: &v1alpha1.OptionalSecretKeySelector{Key: "secret-access-key"}},
			}},
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
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Defaulted(...): -want, +got:\n%s", diff)
	}
}
