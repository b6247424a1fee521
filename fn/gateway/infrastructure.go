package gateway

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	metav1validation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// Pinning an address (see Pinning an address in docs/design.md): the
// TenantGateway's infrastructure and addresses go into the Gateway's spec
// as they are, typed, for its implementation to act on (Cilium copies
// spec.infrastructure onto the Gateway's Service, where LB-IPAM reads
// lbipam.cilium.io/ips and pools select by label).

// maxAddresses is the schema's bound on spec.addresses, as Gateway API's.
const maxAddresses = 16

// gatewayInfrastructure is spec.infrastructure of the Gateway; nil when the
// TenantGateway asks for none.
func gatewayInfrastructure(in *v1alpha1.GatewayInfrastructure) *gwapiv1.GatewayInfrastructure {
	if in == nil || len(in.Labels) == 0 && len(in.Annotations) == 0 {
		return nil
	}
	out := &gwapiv1.GatewayInfrastructure{}
	if len(in.Labels) > 0 {
		out.Labels = make(map[gwapiv1.LabelKey]gwapiv1.LabelValue, len(in.Labels))
		for k, v := range in.Labels {
			out.Labels[gwapiv1.LabelKey(k)] = gwapiv1.LabelValue(v)
		}
	}
	if len(in.Annotations) > 0 {
		out.Annotations = make(map[gwapiv1.AnnotationKey]gwapiv1.AnnotationValue, len(in.Annotations))
		for k, v := range in.Annotations {
			out.Annotations[gwapiv1.AnnotationKey(k)] = gwapiv1.AnnotationValue(v)
		}
	}
	return out
}

// gatewayAddresses is spec.addresses of the Gateway, in spec order, the
// type defaulted to IPAddress.
func gatewayAddresses(in []v1alpha1.GatewayAddress) []gwapiv1.GatewaySpecAddress {
	if len(in) == 0 {
		return nil
	}
	out := make([]gwapiv1.GatewaySpecAddress, 0, len(in))
	for _, a := range in {
		t := gwapiv1.AddressType(addressType(a))
		out = append(out, gwapiv1.GatewaySpecAddress{Type: &t, Value: a.Value})
	}
	return out
}

func addressType(a v1alpha1.GatewayAddress) v1alpha1.AddressType {
	if a.Type == "" {
		return v1alpha1.AddressIPAddress
	}
	return a.Type
}

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
		t := addressType(a)
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
			errs = append(errs, validateHostname(ap.Child("value"), a.Value)...)
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
