package gateway

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// Defaulted returns the spec with the XRD's defaults applied. Admission
// applies them on a live cluster, but `crossplane render` without --xrd and
// objects stored before a default existed arrive without them.
func Defaulted(s v1alpha1.TenantGatewaySpec) v1alpha1.TenantGatewaySpec {
	if s.CertMode == "" {
		s.CertMode = v1alpha1.CertModeHTTP01
	}
	if s.IssuerName == "" {
		// As the XRD does: a spec.acme without a name of its own is then
		// refused, instead of silently losing to the default.
		s.IssuerName = v1alpha1.IssuerLetsEncryptProd
	}
	if s.GatewayClassName == "" {
		s.GatewayClassName = v1alpha1.DefaultGatewayClassName
	}
	if s.DNS01 != nil {
		d := *s.DNS01
		if d.Provider == "" {
			d.Provider = v1alpha1.DNS01Cloudflare
		}
		if d.RFC2136 != nil && d.RFC2136.TSIGAlgorithm == "" {
			r := *d.RFC2136
			r.TSIGAlgorithm = v1alpha1.DefaultTSIGAlgorithm
			d.RFC2136 = &r
		}
		s.DNS01 = &d
	}
	return s
}

// validateName checks the TenantGateway's name, which every composed object
// carries as a label value (see Names in docs/design.md): the API server
// admits an XR name of up to 253 characters, a label value of 63.
func validateName(name string) field.ErrorList {
	if errs := validation.IsValidLabelValue(name); len(errs) > 0 {
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), name,
			fmt.Sprintf("every composed object carries the name as the value of label %s: %s", kube.LabelTenantGateway, strings.Join(errs, "; ")))}
	}
	return nil
}

// Validate checks a defaulted spec. It repeats what the XRD enforces at
// admission, because render and objects stored before a rule existed bypass
// admission. Every error names the field and, for enums, the allowed values.
func Validate(s v1alpha1.TenantGatewaySpec) field.ErrorList {
	p := field.NewPath("spec")
	var errs field.ErrorList

	errs = append(errs, validateHostname(p.Child("apex"), s.Apex)...)

	if !slices.Contains(v1alpha1.CertModes, s.CertMode) {
		errs = append(errs, field.NotSupported(p.Child("certMode"), s.CertMode, v1alpha1.CertModes))
	}
	if s.GatewayClassName == "" {
		errs = append(errs, field.Required(p.Child("gatewayClassName"), "the GatewayClass of the Gateway"))
	}
	if n := s.ACMEOrdersPerBranch; n != nil && (*n < 0 || *n > maxOrders) {
		errs = append(errs, field.Invalid(p.Child("acmeOrdersPerBranch"), *n, fmt.Sprintf("must be between 0 and %d (deprecated and ignored: the order quota is the platform setting %s)", maxOrders, acme.QuotaSettingPath)))
	}

	switch s.CertMode {
	case v1alpha1.CertModeHTTP01:
		errs = append(errs, validateIssuer(p, s)...)
	case v1alpha1.CertModeDNS01:
		errs = append(errs, validateIssuer(p, s)...)
		errs = append(errs, validateDNS01(p.Child("dns01"), s.DNS01)...)
	case v1alpha1.CertModeExistingSecret:
		if s.WildcardSecretRef == nil || s.WildcardSecretRef.Name == "" {
			errs = append(errs, field.Required(p.Child("wildcardSecretRef", "name"), "the wildcard TLS Secret is required when spec.certMode is existingSecret"))
		}
	case v1alpha1.CertModeEdge:
		// Edge mode reads no solver, provider or issuer settings.
	}

	errs = append(errs, validateLabels(p.Child("attachedNamespaces"), s.AttachedNamespaces)...)
	errs = append(errs, validateLabels(p.Child("tlsPassthroughServices"), s.TLSPassthroughServices)...)
	errs = append(errs, ValidateInfrastructure(p.Child("infrastructure"), s.Infrastructure)...)
	errs = append(errs, ValidateAddresses(p.Child("addresses"), s.Addresses)...)
	return errs
}

func validateHostname(p *field.Path, h string) field.ErrorList {
	switch {
	case h == "":
		return field.ErrorList{field.Required(p, "a lowercase DNS name such as example.org")}
	case len(h) > validation.DNS1123SubdomainMaxLength:
		return field.ErrorList{field.TooLong(p, "", validation.DNS1123SubdomainMaxLength)}
	case strings.HasPrefix(h, "*."):
		return field.ErrorList{field.Invalid(p, h, "must be a concrete DNS name, not a wildcard")}
	case len(validation.IsDNS1123Subdomain(h)) > 0:
		return field.ErrorList{field.Invalid(p, h, "must be a lowercase DNS name (labels of a-z, 0-9 and '-', separated by dots)")}
	}
	return nil
}

// validateIssuer checks the ACME server of an http01 or dns01 spec (p is
// spec): a built-in issuer without spec.acme, or a name of its own with
// spec.acme defining the server (see ACME servers in docs/design.md). The
// name is required because the XRD defaults it: a spec.acme beside the
// default letsencrypt-prod would leave it unclear which one is used.
func validateIssuer(p *field.Path, s v1alpha1.TenantGatewaySpec) field.ErrorList {
	name := p.Child("issuerName")
	builtin := slices.Contains(v1alpha1.IssuerNames, s.IssuerName)
	switch {
	case builtin && s.ACME != nil:
		return field.ErrorList{field.Forbidden(p.Child("acme"), fmt.Sprintf(
			"spec.issuerName is the built-in issuer %q, which spec.acme cannot redefine: to use the ACME server of spec.acme, give it a name of its own in spec.issuerName (a DNS label other than %s)",
			s.IssuerName, text.Quoted(v1alpha1.IssuerNames)))}
	case builtin:
		return nil
	case s.ACME == nil:
		// Without spec.acme only the built-in issuers are supported.
		return field.ErrorList{field.NotSupported(name, s.IssuerName, v1alpha1.IssuerNames)}
	}
	var errs field.ErrorList
	if len(validation.IsDNS1123Label(string(s.IssuerName))) > 0 {
		errs = append(errs, field.Invalid(name, s.IssuerName, fmt.Sprintf("must be a DNS label: at most %d characters of a-z, 0-9 and '-', starting and ending with a letter or digit", validation.DNS1123LabelMaxLength)))
	}
	return append(errs, ValidateACMEServer(p.Child("acme"), s.ACME)...)
}

// Bounds of an ACME server's fields, as the XRD declares them.
const (
	maxACMEDirectory = 2048
	maxEABKeyID      = 256
	// maxEmail is the longest forward path SMTP carries (RFC 5321).
	maxEmail = 254
)

// ValidateACMEServer checks an ACME server at p: spec.acme, or an entry of
// the platform settings' publishing.certificates.acmeServers. The directory
// is https (cert-manager sends the account's signed requests and the
// binding there), the CA bundle holds PEM certificates and nothing else,
// an External Account Binding has both its key ID and its Secret.
func ValidateACMEServer(p *field.Path, a *v1alpha1.ACMEServer) field.ErrorList {
	errs := validateDirectory(p.Child("server"), a.Server)
	if a.CABundle != "" {
		errs = append(errs, validateCABundle(p.Child("caBundle"), a.CABundle)...)
	}
	if a.ExternalAccountBinding != nil {
		errs = append(errs, validateEAB(p.Child("externalAccountBinding"), a.ExternalAccountBinding)...)
	}
	if a.Email != "" {
		errs = append(errs, validateEmail(p.Child("email"), a.Email)...)
	}
	return errs
}

const exampleDirectory = "https://acme.example.org/directory"

func validateDirectory(p *field.Path, v string) field.ErrorList {
	switch {
	case v == "":
		return field.ErrorList{field.Required(p, "the https:// URL of the ACME directory, such as "+exampleDirectory)}
	case len(v) > maxACMEDirectory:
		return field.ErrorList{field.TooLong(p, "", maxACMEDirectory)}
	}
	u, err := url.Parse(v)
	if err != nil || !strings.HasPrefix(v, "https://") || u.Host == "" {
		return field.ErrorList{field.Invalid(p, v, "must be an https:// URL with a host, such as "+exampleDirectory+": the ACME account's requests and its External Account Binding go there")}
	}
	return nil
}

// validateCABundle requires PEM text of CERTIFICATE blocks, each a parsable
// X.509 certificate. Text between blocks (a bundle's comments) is allowed;
// any other block is refused, so that a key pasted by mistake is not copied
// into the Issuer. The bundle's content never goes into a message.
func validateCABundle(p *field.Path, v string) field.ErrorList {
	if len(v) > v1alpha1.MaxCABundle {
		return field.ErrorList{field.TooLong(p, "", v1alpha1.MaxCABundle)}
	}
	blocks := 0
	for rest := []byte(v); ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		blocks++
		if b.Type != "CERTIFICATE" {
			return field.ErrorList{field.Invalid(p, field.OmitValueType{}, fmt.Sprintf("PEM block %d is a %q block: a CA bundle holds only CERTIFICATE blocks", blocks, b.Type))}
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return field.ErrorList{field.Invalid(p, field.OmitValueType{}, fmt.Sprintf("PEM block %d is not an X.509 certificate: %v", blocks, err))}
		}
	}
	if blocks == 0 {
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, "must be PEM text holding at least one -----BEGIN CERTIFICATE----- block (the PEM itself, not base64 of it)")}
	}
	return nil
}

func validateEAB(p *field.Path, e *v1alpha1.ExternalAccountBinding) field.ErrorList {
	const both = "an External Account Binding needs both keyID and keySecretRef"
	var errs field.ErrorList
	switch {
	case e.KeyID == "":
		errs = append(errs, field.Required(p.Child("keyID"), "the key ID the CA gave for the account: "+both))
	case len(e.KeyID) > maxEABKeyID:
		errs = append(errs, field.TooLong(p.Child("keyID"), "", maxEABKeyID))
	}
	if e.KeySecretRef == nil {
		return append(errs, field.Required(p.Child("keySecretRef"), "the Secret (name and key) holding the CA's MAC key: "+both))
	}
	return append(errs, validateSecretKey(p.Child("keySecretRef"), e.KeySecretRef)...)
}

func validateEmail(p *field.Path, v string) field.ErrorList {
	if len(v) > maxEmail {
		return field.ErrorList{field.TooLong(p, "", maxEmail)}
	}
	if a, err := mail.ParseAddress(v); err != nil || a.Address != v {
		return field.ErrorList{field.Invalid(p, v, "must be a bare email address such as ops@example.org, without a display name or angle brackets")}
	}
	return nil
}

func validateDNS01(p *field.Path, d *v1alpha1.DNS01) field.ErrorList {
	if d == nil {
		return field.ErrorList{field.Required(p, fmt.Sprintf("the DNS-01 provider is required when spec.certMode is dns01 (spec.dns01.provider: one of %s, with the block of that name)", text.Quoted(v1alpha1.DNS01ProviderNames)))}
	}
	v, ok := dns01Providers[d.Provider]
	switch {
	case !ok:
		return field.ErrorList{field.NotSupported(p.Child("provider"), d.Provider, v1alpha1.DNS01ProviderNames)}
	case !v.present(d):
		return field.ErrorList{providerBlockRequired(p, d.Provider)}
	}
	return v.validate(p.Child(string(d.Provider)), d)
}

func providerBlockRequired(p *field.Path, provider v1alpha1.DNS01ProviderName) *field.Error {
	return field.Required(p.Child(string(provider)), fmt.Sprintf("spec.dns01.provider is %s, so the %s block is required", provider, provider))
}

func validateSecretKey(p *field.Path, s *v1alpha1.SecretKeySelector) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "the name of a Secret in the TenantGateway's namespace"))
	}
	if s.Key == "" {
		errs = append(errs, field.Required(p.Child("key"), "the key within the Secret"))
	}
	return errs
}

// validateLabels checks a list of namespace or service names: each a DNS
// label, none repeated.
func validateLabels(p *field.Path, l []v1alpha1.DNSLabel) field.ErrorList {
	var errs field.ErrorList
	seen := make(map[v1alpha1.DNSLabel]bool, len(l))
	for i, v := range l {
		switch {
		case len(validation.IsDNS1123Label(string(v))) > 0:
			errs = append(errs, field.Invalid(p.Index(i), v, fmt.Sprintf("must be a DNS label: at most %d characters of a-z, 0-9 and '-', starting and ending with a letter or digit", validation.DNS1123LabelMaxLength)))
		case seen[v]:
			errs = append(errs, field.Duplicate(p.Index(i), v))
		}
		seen[v] = true
	}
	return errs
}
