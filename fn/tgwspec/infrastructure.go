package tgwspec

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	metav1validation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// maxAddresses is the schema's bound on spec.addresses, as Gateway API's.
const maxAddresses = 16

// ValidateInfrastructure checks what the Gateway API schema would refuse
// on the Gateway (so that the TenantGateway, not a failed apply, names
// it): at most 8 labels and 8 annotations, Kubernetes label keys and
// values, annotation keys, and annotation values within the API server's
// total size.
func ValidateInfrastructure(p *field.Path, in *v1alpha1.GatewayInfrastructure) field.ErrorList {
	if in == nil {
		return nil
	}
	var errs field.ErrorList
	if n := len(in.Labels); n > v1alpha1.MaxInfrastructureEntries {
		errs = append(errs, field.TooMany(p.Child("labels"), n, v1alpha1.MaxInfrastructureEntries))
	}
	if n := len(in.Annotations); n > v1alpha1.MaxInfrastructureEntries {
		errs = append(errs, field.TooMany(p.Child("annotations"), n, v1alpha1.MaxInfrastructureEntries))
	}
	for _, k := range slices.Sorted(maps.Keys(in.Labels)) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(p.Child("labels"), k, "label key: "+msg))
		}
		for _, msg := range validation.IsValidLabelValue(in.Labels[k]) {
			errs = append(errs, field.Invalid(p.Child("labels").Key(k), in.Labels[k], "label value: "+msg))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(in.Annotations)) {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(p.Child("annotations"), k, "annotation key: "+msg))
		}
	}
	if err := metav1validation.ValidateAnnotationsSize(in.Annotations); err != nil {
		errs = append(errs, field.TooLong(p.Child("annotations"), "", metav1validation.TotalAnnotationSizeLimitB))
	}
	return errs
}

// ValidateAddresses checks each address against its type: an IP address
// for IPAddress, a lowercase DNS name for Hostname, a name for
// NamedAddress; and refuses the same address twice.
func ValidateAddresses(p *field.Path, in []v1alpha1.GatewayAddress) field.ErrorList {
	var errs field.ErrorList
	if len(in) > maxAddresses {
		errs = append(errs, field.TooMany(p, len(in), maxAddresses))
	}
	seen := map[v1alpha1.GatewayAddress]bool{}
	for i, a := range in {
		ap := p.Index(i)
		t := AddressType(a)
		switch {
		case !slices.Contains(v1alpha1.AddressTypes, t):
			errs = append(errs, field.NotSupported(ap.Child("type"), t, v1alpha1.AddressTypes))
			continue
		case a.Value == "":
			errs = append(errs, field.Required(ap.Child("value"), fmt.Sprintf("the %s the Gateway asks for", t)))
			continue
		case len(a.Value) > validation.DNS1123SubdomainMaxLength:
			errs = append(errs, field.TooLong(ap.Child("value"), "", validation.DNS1123SubdomainMaxLength))
			continue
		}
		switch t {
		case v1alpha1.AddressIPAddress:
			if _, err := netip.ParseAddr(a.Value); err != nil {
				errs = append(errs, field.Invalid(ap.Child("value"), a.Value, "type IPAddress needs an IPv4 or IPv6 address, such as 198.51.100.10"))
			}
		case v1alpha1.AddressHostname:
			errs = append(errs, ValidateHostname(ap.Child("value"), a.Value)...)
		case v1alpha1.AddressNamedAddress:
			// The implementation's own name: any non-empty string.
		}
		key := v1alpha1.GatewayAddress{Type: t, Value: a.Value}
		if seen[key] {
			errs = append(errs, field.Duplicate(ap, a.Value))
		}
		seen[key] = true
	}
	return errs
}
