package tgwspec

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// Validate checks a defaulted spec. It repeats what the XRD enforces at
// admission, because render and objects stored before a rule existed bypass
// admission. Every error names the field and, for enums, the allowed values.
func Validate(s v1alpha1.TenantGatewaySpec) field.ErrorList {
	p := field.NewPath("spec")
	var errs field.ErrorList

	errs = append(errs, ValidateHostname(p.Child("apex"), s.Apex)...)

	if !slices.Contains(v1alpha1.CertModes, s.CertMode) {
		errs = append(errs, field.NotSupported(p.Child("certMode"), s.CertMode, v1alpha1.CertModes))
	}
	if s.GatewayClassName == "" {
		errs = append(errs, field.Required(p.Child("gatewayClassName"), "the GatewayClass of the Gateway"))
	}
	if n := s.ACMEOrdersPerBranch; n != nil && (*n < 0 || *n > acme.MaxOrderQuota) {
		errs = append(errs, field.Invalid(p.Child("acmeOrdersPerBranch"), *n, fmt.Sprintf("must be between 0 and %d (deprecated and ignored: the order quota is the platform setting %s)", acme.MaxOrderQuota, acme.QuotaSettingPath)))
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

// ValidateHostname checks a concrete, lowercase DNS name at p.
func ValidateHostname(p *field.Path, h string) field.ErrorList {
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
