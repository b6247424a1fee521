package tgwspec

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// The Secret references a platform's dns01 settings get when they leave
// them out: the reference platform chart's defaults, so that an operator
// bringing its platform values over gets the same Issuer (see "Platform
// settings" in docs/design.md).
const (
	PlatformCloudflareSecret     = "cloudflare-api-token-secret"
	PlatformCloudflareKey        = "api-token"
	PlatformDigitalOceanSecret   = "digitalocean-api-token-secret"
	PlatformDigitalOceanKey      = "access-token"
	PlatformRoute53SecretKey     = "secret-access-key"
	PlatformRFC2136TSIGSecretKey = "tsig-secret-key"
)

// dns01Provider is what the spec says of one DNS-01 provider, so that adding
// one means adding one entry here (and its cert-manager solver in
// fn/gateway): whether its block is present, how to validate it, and how
// the platform settings default it.
type dns01Provider struct {
	// present says whether the block of this provider is set.
	present func(*v1alpha1.DNS01) bool
	// only copies d keeping only this provider's block.
	only func(d *v1alpha1.DNS01) *v1alpha1.DNS01
	// platformDefaults fills what the reference platform chart fills in
	// a block that is present (or creates it where the chart needs nothing
	// else), on a copy made by only.
	platformDefaults func(*v1alpha1.DNS01)
	// validate checks the block, which present has confirmed.
	validate func(*field.Path, *v1alpha1.DNS01) field.ErrorList
}

var dns01Providers = map[v1alpha1.DNS01ProviderName]dns01Provider{
	v1alpha1.DNS01Cloudflare: {
		present: func(d *v1alpha1.DNS01) bool { return d.Cloudflare != nil },
		only: func(d *v1alpha1.DNS01) *v1alpha1.DNS01 {
			return &v1alpha1.DNS01{Provider: d.Provider, Cloudflare: d.Cloudflare.DeepCopy()}
		},
		platformDefaults: func(d *v1alpha1.DNS01) {
			if d.Cloudflare == nil {
				d.Cloudflare = &v1alpha1.CloudflareProvider{}
			}
			defaultSecretKey(&d.Cloudflare.APITokenSecretRef, PlatformCloudflareSecret, PlatformCloudflareKey)
		},
		validate: func(p *field.Path, d *v1alpha1.DNS01) field.ErrorList {
			return validateSecretKey(p.Child("apiTokenSecretRef"), &d.Cloudflare.APITokenSecretRef)
		},
	},
	v1alpha1.DNS01Route53: {
		present: func(d *v1alpha1.DNS01) bool { return d.Route53 != nil },
		only: func(d *v1alpha1.DNS01) *v1alpha1.DNS01 {
			return &v1alpha1.DNS01{Provider: d.Provider, Route53: d.Route53.DeepCopy()}
		},
		// The region has no default, so a missing block stays missing and
		// is refused naming it; the chart defaults only the key.
		platformDefaults: func(d *v1alpha1.DNS01) {
			if ref := Route53Secret(d.Route53); ref != nil && ref.Key == "" {
				ref.Key = PlatformRoute53SecretKey
			}
		},
		validate: func(p *field.Path, d *v1alpha1.DNS01) field.ErrorList {
			var errs field.ErrorList
			if d.Route53.Region == "" {
				errs = append(errs, field.Required(p.Child("region"), "the AWS region of the Route53 API"))
			}
			if ref := Route53Secret(d.Route53); ref != nil && ref.Key == "" {
				errs = append(errs, field.Required(p.Child("secretAccessKeySecretRef", "key"),
					"the key within the Secret named by spec.dns01.route53.secretAccessKeySecretRef.name (leave the name empty for ambient credentials)"))
			}
			return errs
		},
	},
	v1alpha1.DNS01DigitalOcean: {
		present: func(d *v1alpha1.DNS01) bool { return d.DigitalOcean != nil },
		only: func(d *v1alpha1.DNS01) *v1alpha1.DNS01 {
			return &v1alpha1.DNS01{Provider: d.Provider, DigitalOcean: d.DigitalOcean.DeepCopy()}
		},
		platformDefaults: func(d *v1alpha1.DNS01) {
			if d.DigitalOcean == nil {
				d.DigitalOcean = &v1alpha1.DigitalOceanProvider{}
			}
			defaultSecretKey(&d.DigitalOcean.TokenSecretRef, PlatformDigitalOceanSecret, PlatformDigitalOceanKey)
		},
		validate: func(p *field.Path, d *v1alpha1.DNS01) field.ErrorList {
			return validateSecretKey(p.Child("tokenSecretRef"), &d.DigitalOcean.TokenSecretRef)
		},
	},
	v1alpha1.DNS01RFC2136: {
		present: func(d *v1alpha1.DNS01) bool { return d.RFC2136 != nil },
		only: func(d *v1alpha1.DNS01) *v1alpha1.DNS01 {
			return &v1alpha1.DNS01{Provider: d.Provider, RFC2136: d.RFC2136.DeepCopy()}
		},
		// The nameserver and key name have no default; the chart defaults
		// the algorithm (as Defaulted does) and the key.
		platformDefaults: func(d *v1alpha1.DNS01) {
			if d.RFC2136 != nil {
				defaultSecretKey(&d.RFC2136.TSIGSecretSecretRef, "", PlatformRFC2136TSIGSecretKey)
			}
		},
		validate: func(p *field.Path, d *v1alpha1.DNS01) field.ErrorList {
			var errs field.ErrorList
			if d.RFC2136.Nameserver == "" {
				errs = append(errs, field.Required(p.Child("nameserver"), "host:port of the authoritative DNS server"))
			}
			if d.RFC2136.TSIGKeyName == "" {
				errs = append(errs, field.Required(p.Child("tsigKeyName"), "the name of the TSIG key"))
			}
			return append(errs, validateSecretKey(p.Child("tsigSecretSecretRef"), &d.RFC2136.TSIGSecretSecretRef)...)
		},
	},
}

// PlatformDNS01 is the dns01 block a Tenant's TenantGateway gets from the
// platform settings d (nil when the settings have none): the provider
// defaulted to cloudflare, only that provider's block kept, and the Secret
// references the reference platform chart fills when they are left out.
// An unsupported provider comes back as it is, for Validate to refuse with
// the allowed list.
func PlatformDNS01(d *v1alpha1.DNS01) *v1alpha1.DNS01 {
	out := &v1alpha1.DNS01{Provider: v1alpha1.DNS01Cloudflare}
	if d != nil && d.Provider != "" {
		out.Provider = d.Provider
	}
	p, ok := dns01Providers[out.Provider]
	if !ok {
		return out
	}
	if d != nil {
		out = p.only(&v1alpha1.DNS01{
			Provider: out.Provider, Cloudflare: d.Cloudflare, Route53: d.Route53,
			DigitalOcean: d.DigitalOcean, RFC2136: d.RFC2136,
		})
	}
	p.platformDefaults(out)
	return out
}

// Route53Secret is the Secret reference of a route53 block, nil for ambient
// credentials (IRSA, an instance profile): no reference, or one with an
// empty name, which the Cozystack gateway chart renders when the platform
// names no Secret (see Differences from the Cozystack controller in
// docs/design.md). cert-manager then uses the AWS SDK's default chain.
func Route53Secret(r *v1alpha1.Route53Provider) *v1alpha1.OptionalSecretKeySelector {
	if r == nil || r.SecretAccessKeySecretRef == nil || r.SecretAccessKeySecretRef.Name == "" {
		return nil
	}
	return r.SecretAccessKeySecretRef
}

// defaultSecretKey fills an empty name (when the chart has a default for
// it) and an empty key.
func defaultSecretKey(s *v1alpha1.SecretKeySelector, name, key string) {
	if s.Name == "" {
		s.Name = name
	}
	if s.Key == "" {
		s.Key = key
	}
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
