package tgwspec

import v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"

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

// AddressType is the type of an address, IPAddress when it names none,
// as the XRD defaults it.
func AddressType(a v1alpha1.GatewayAddress) v1alpha1.AddressType {
	if a.Type == "" {
		return v1alpha1.AddressIPAddress
	}
	return a.Type
}
