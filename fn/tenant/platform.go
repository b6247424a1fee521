package tenant

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
)

// Platform is the cluster-wide settings (see Tenants in docs/design.md and the
// README), defaults applied.
type Platform struct {
	Host            string
	IngressName     string
	ExposedServices []string
	Solver          string
	IssuerName      string
	WildcardSecret  string
	DNS01           *v1alpha1.DNS01
	// ACMEServers are the ACME servers an issuerName may name besides the
	// built-in issuers, by name (see Platform settings: ACME servers in
	// docs/design.md).
	ACMEServers map[string]v1alpha1.ACMEServer

	GatewayEnabled          bool
	ClassName               string
	TenantSelectableClasses []string
	EdgeTerminatedClasses   []string
	AttachedNamespaces      []string
	TLSPassthroughServices  []string
	// Infrastructure pins owning tenants' Gateways, by tenant namespace
	// (see Pinning an address in docs/design.md).
	Infrastructure map[string]Pin
}

// A Pin is what an owning tenant's TenantGateway gets in
// spec.infrastructure and spec.addresses (platform setting
// gateway.infrastructure.<namespace>).
type Pin struct {
	Labels      map[string]string         `json:"labels,omitempty"`
	Annotations map[string]string         `json:"annotations,omitempty"`
	Addresses   []v1alpha1.GatewayAddress `json:"addresses,omitempty"`
}

// pathInfrastructure is where the platform settings pin Gateways.
var pathInfrastructure = field.NewPath("gateway", "infrastructure")

// Platform defaults.
const (
	DefaultIngressName = "tenant-root"
	DefaultSolver      = "http01"
)

// DefaultTLSPassthroughServices are the platform services published with TLS
// passthrough when exposed.
var DefaultTLSPassthroughServices = []string{"api", "vm-exportproxy", "cdi-uploadproxy"}

// ParsePlatform reads the data of the platform EnvironmentConfig. A list entry
// that is not a string, or holds a comma (the lists travel comma-joined
// through chart values), fails naming the entry.
func ParsePlatform(data map[string]any) (Platform, error) {
	p := Platform{
		IngressName:            DefaultIngressName,
		Solver:                 DefaultSolver,
		IssuerName:             string(v1alpha1.IssuerLetsEncryptProd),
		ClassName:              v1alpha1.DefaultGatewayClassName,
		TLSPassthroughServices: DefaultTLSPassthroughServices,
	}
	r := reader{data: data}
	r.str(&p.Host, "publishing", "host")
	r.str(&p.IngressName, "publishing", "ingressName")
	r.list(&p.ExposedServices, "publishing", "exposedServices")
	r.str(&p.Solver, "publishing", "certificates", "solver")
	r.str(&p.IssuerName, "publishing", "certificates", "issuerName")
	r.str(&p.WildcardSecret, "publishing", "certificates", "wildcardSecretName")
	if d, ok := r.get("publishing", "certificates", "dns01").(map[string]any); ok {
		p.DNS01 = &v1alpha1.DNS01{}
		if err := jsonobj.Decode(d, p.DNS01); err != nil {
			r.fail(fmt.Errorf("publishing.certificates.dns01: %w", err))
		}
	}
	r.acmeServers(&p.ACMEServers)
	r.boolean(&p.GatewayEnabled, "gateway", "enabled")
	r.str(&p.ClassName, "gateway", "className")
	r.list(&p.TenantSelectableClasses, "gateway", "tenantSelectableClasses")
	r.list(&p.EdgeTerminatedClasses, "gateway", "edgeTerminatedClasses")
	r.list(&p.AttachedNamespaces, "gateway", "attachedNamespaces")
	r.list(&p.TLSPassthroughServices, "gateway", "tlsPassthroughServices")
	r.infrastructure(&p.Infrastructure)
	return p, r.err
}

// reader walks the settings, keeping the first error.
type reader struct {
	data map[string]any
	err  error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) get(path ...string) any {
	var v any = r.data
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func (r *reader) str(into *string, path ...string) {
	switch v := r.get(path...).(type) {
	case nil:
	case string:
		if v != "" {
			*into = v
		}
	default:
		r.fail(fmt.Errorf("platform setting %s must be a string, not %v", strings.Join(path, "."), v))
	}
}

func (r *reader) boolean(into *bool, path ...string) {
	switch v := r.get(path...).(type) {
	case nil:
	case bool:
		*into = v
	default:
		r.fail(fmt.Errorf("platform setting %s must be true or false, not %v", strings.Join(path, "."), v))
	}
}

func (r *reader) list(into *[]string, path ...string) {
	name := strings.Join(path, ".")
	switch v := r.get(path...).(type) {
	case nil:
	case []any:
		out := make([]string, 0, len(v))
		for i, e := range v {
			s, ok := e.(string)
			switch {
			case !ok:
				r.fail(fmt.Errorf("platform setting %s[%d] must be a string, not %v", name, i, e))
				return
			case strings.Contains(s, ","):
				r.fail(fmt.Errorf("platform setting %s[%d] %q holds a comma; the entries of %s are names and are joined with commas on the way to the charts", name, i, s, name))
				return
			}
			out = append(out, s)
		}
		*into = out
	default:
		r.fail(fmt.Errorf("platform setting %s must be a list of strings, not %v", name, v))
	}
}

// pathACMEServers is where the platform settings define ACME servers.
var pathACMEServers = field.NewPath("publishing", "certificates", "acmeServers")

// acmeServers decodes publishing.certificates.acmeServers, a map of server
// names to servers, strictly: a misspelt caBundle or externalAccountBinding
// would otherwise leave the Issuer without it and fail only at the CA. The
// entries are read in name order, so the first error is always the same one.
// Whether an entry makes a valid server is judged only when issuerName
// selects it (see issuerSettings).
func (r *reader) acmeServers(into *map[string]v1alpha1.ACMEServer) {
	switch v := r.get("publishing", "certificates", "acmeServers").(type) {
	case nil:
	case map[string]any:
		out := make(map[string]v1alpha1.ACMEServer, len(v))
		for _, name := range slices.Sorted(maps.Keys(v)) {
			var a v1alpha1.ACMEServer
			if err := jsonobj.DecodeStrict(v[name], &a); err != nil {
				r.fail(fmt.Errorf("platform setting %s: %w", pathACMEServers.Key(name), err))
				return
			}
			out[name] = a
		}
		*into = out
	default:
		r.fail(fmt.Errorf("platform setting %s must map the names of ACME servers to their settings (server, caBundle, externalAccountBinding, email)", pathACMEServers))
	}
}

// infrastructure decodes gateway.infrastructure, a map of tenant
// namespaces to pins, strictly (a misspelt key would silently pin nothing),
// in namespace order. Whether a pin is valid is judged when its tenant
// derives its TenantGateway (pinSettings).
func (r *reader) infrastructure(into *map[string]Pin) {
	switch v := r.get("gateway", "infrastructure").(type) {
	case nil:
	case map[string]any:
		out := make(map[string]Pin, len(v))
		for _, ns := range slices.Sorted(maps.Keys(v)) {
			var pin Pin
			if err := jsonobj.DecodeStrict(v[ns], &pin); err != nil {
				r.fail(fmt.Errorf("platform setting %s: %w", pathInfrastructure.Key(ns), err))
				return
			}
			out[ns] = pin
		}
		*into = out
	default:
		r.fail(fmt.Errorf("platform setting %s must map owning tenants' namespaces to labels, annotations and addresses for their Gateways", pathInfrastructure))
	}
}

// CertManagerNamespace reads the platform setting gateway.certManagerNamespace:
// the namespace of cert-manager's HTTP-01 challenge routes, which every
// TenantGateway's port-80 listener admits (see Platform settings in
// docs/design.md). It is read apart from ParsePlatform so that a bad
// Tenant-only setting cannot stop every TenantGateway. def, the function
// input's value, applies when the setting is absent or empty.
func CertManagerNamespace(data map[string]any, def string) (string, error) {
	ns := def
	r := reader{data: data}
	r.str(&ns, PathCertManagerNamespace...)
	if r.err != nil {
		return "", r.err
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return "", fmt.Errorf("platform setting %s %q is not a namespace name: %s", strings.Join(PathCertManagerNamespace, "."), ns, strings.Join(errs, "; "))
	}
	// Every Gateway's port-80 listener admits this namespace's routes,
	// whatever hostnames they name and before the redirect: a tenant
	// namespace there would serve its names in plain HTTP on every
	// Gateway, which the port-80 rule of route-hostname-policy keeps off
	// the owner's (see Scope in docs/design.md).
	if strings.HasPrefix(ns, tenantNamespacePrefix) {
		return "", fmt.Errorf("platform setting %s %q names a tenant namespace (%s*): every Gateway's port-80 listener would serve that tenant's routes in plain HTTP; name the namespace cert-manager runs in (cozy-cert-manager on Cozystack)", strings.Join(PathCertManagerNamespace, "."), ns, tenantNamespacePrefix)
	}
	return ns, nil
}

// tenantNamespacePrefix begins the name of every tenant namespace the
// Tenant derivation composes, and of every namespace the admission policies
// treat as a tenant's.
const tenantNamespacePrefix = "tenant-"

// PathCertManagerNamespace is where the platform settings hold the
// cert-manager namespace.
var PathCertManagerNamespace = []string{"gateway", "certManagerNamespace"}
