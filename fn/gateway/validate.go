package gateway

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// Defaulted returns the spec with the XRD's defaults applied. Admission
// applies them on a live cluster, but `crossplane render` without --xrd and
// objects stored before a default existed arrive without them.
func Defaulted(s v1alpha1.TenantGatewaySpec) v1alpha1.TenantGatewaySpec {
	if s.CertMode == "" {
		s.CertMode = v1alpha1.CertModeHTTP01
	}
	if s.IssuerName == "" {
		s.IssuerName = v1alpha1.IssuerLetsEncryptProd
	}
	if s.GatewayClassName == "" {
		s.GatewayClassName = v1alpha1.DefaultGatewayClassName
	}
	if s.ACMEOrdersPerBranch == nil {
		n := int32(v1alpha1.DefaultACMEOrdersPerBranch)
		s.ACMEOrdersPerBranch = &n
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
			fmt.Sprintf("every composed object carries the name as the value of label %s: %s", LabelTenantGateway, strings.Join(errs, "; ")))}
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
		errs = append(errs, field.Invalid(p.Child("acmeOrdersPerBranch"), *n, fmt.Sprintf("must be between 0 (no bound) and %d", maxOrders)))
	}

	switch s.CertMode {
	case v1alpha1.CertModeHTTP01:
		errs = append(errs, validateIssuerName(p.Child("issuerName"), s.IssuerName)...)
	case v1alpha1.CertModeDNS01:
		errs = append(errs, validateIssuerName(p.Child("issuerName"), s.IssuerName)...)
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

func validateIssuerName(p *field.Path, n v1alpha1.IssuerName) field.ErrorList {
	if slices.Contains(v1alpha1.IssuerNames, n) {
		return nil
	}
	return field.ErrorList{field.NotSupported(p, n, v1alpha1.IssuerNames)}
}

func validateDNS01(p *field.Path, d *v1alpha1.DNS01) field.ErrorList {
	if d == nil {
		return field.ErrorList{field.Required(p, fmt.Sprintf("the DNS-01 provider is required when spec.certMode is dns01 (spec.dns01.provider: one of %s, with the block of that name)", Quoted(v1alpha1.DNS01ProviderNames)))}
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

// Quoted lists allowed values as "a", "b", the way every refusal names
// them (refusals of the Tenant derivation put them in brackets).
func Quoted[T ~string](l []T) string {
	s := make([]string, len(l))
	for i, v := range l {
		s[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(s, ", ")
}
