package tenant

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kclusterv1alpha2 "github.com/crossplane-contrib/provider-kubernetes/apis/cluster/object/v1alpha2"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/text"
	"github.com/cozystack/function-tenant-gateway/fn/tgwspec"
)

// Names of what a Tenant composes.
const (
	// RootTenant is the name of the root tenant's claim.
	RootTenant = "root"
	// TenantGateway is the name of the TenantGateway an owning tenant
	// composes in its namespace.
	TenantGateway = "cozystack"
	// QuotaName is the name of the tenant namespace's ResourceQuota.
	QuotaName = "tenant-quota"
)

// Composition resource names of what a Tenant composes (the keys of
// desired state), apart from the key "gateway" (KeyGateway of fn/gateway),
// which names the Gateway a TenantGateway composes.
const (
	// KeyNamespace is the tenant namespace (an Object when it exists
	// already, see Tenants in docs/design.md).
	KeyNamespace = "namespace"
	// KeyTenantGateway is the TenantGateway of an owning tenant.
	KeyTenantGateway = "tenantgateway"
	// KeyResourceQuota is the tenant namespace's ResourceQuota.
	KeyResourceQuota = "resourcequota"
)

// Input is everything one run knows about one Tenant claim.
type Input struct {
	// Name and Parent are the claim's name and namespace.
	Name   string
	Parent string
	Spec   appsv1alpha1.TenantSpec
	// ParentLabels are the parent namespace's labels (nil: not found).
	ParentLabels map[string]string
	Platform     Platform
	// WildcardSecret is the Secret of the listeners' name in the tenant
	// namespace as the replica Object observed it (nil: not observed).
	WildcardSecret *ObservedSecret
	// Observed are the composed resources Crossplane observed, by key.
	Observed map[string]*kube.ObservedResource
	// GatewayConditions are the conditions of the tenant's TenantGateway
	// as provider-kubernetes observed it (nil: none reported yet).
	GatewayConditions []xpv2.Condition
	// GatewayClasses are the names of the cluster's GatewayClasses, read
	// only when ChecksClasses says so.
	GatewayClasses []string
	// ClusterIssuers are the cluster's ClusterIssuers, read only when
	// ChecksClusterIssuers says so.
	ClusterIssuers []cmv1.ClusterIssuer
	// PublishingLabels are the publishing tenant's namespace's labels,
	// read only when NeedsPublishingNamespace says so (nil: not read, or
	// not found).
	PublishingLabels map[string]string
	// Conditions are the Tenant's own conditions as last written: what it
	// already shows, so that a warning is raised only on change.
	Conditions []xpv2.Condition
}

// Output is what one Tenant composes and reports.
type Output struct {
	Status    appsv1alpha1.TenantStatus
	Resources []kube.Resource
	// Ready maps the key of each resource in Resources to whether it is
	// ready.
	Ready map[string]bool
	// Conditions are the Tenant's conditions besides Accepted (see
	// Acceptance): TenantGatewayReady for a tenant that owns a
	// TenantGateway, GatewayClassesFound for the publishing tenant.
	Conditions []Condition
	// Warnings are for the tenant and the operator, each bounded.
	Warnings []string
}

// A RefusedError is a derivation failure of this tenant only: its cause is
// in the Tenant's spec or in the platform settings, and its message, bounded
// like every message the function writes, says which and how to fix it.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

func refuse(format string, a ...any) error {
	return &RefusedError{Reason: text.Truncate(fmt.Sprintf(format, a...))}
}

// Derive computes a tenant's namespace, labels and TenantGateway.
func Derive(in Input) (*Output, error) {
	root := in.Name == RootTenant && in.Parent == in.Platform.IngressName
	ns := namespaceOf(in, root)
	apex := apexOf(in, root)
	owning := in.Spec.Gateway != nil && *in.Spec.Gateway

	out := &Output{Status: appsv1alpha1.TenantStatus{Namespace: ns, Apex: apex}}
	labels := map[string]string{}
	if apex != "" {
		labels[kube.LabelNamespaceHost] = apex
	}
	if owning {
		out.Status.GatewayNamespace = ns
	} else {
		out.Status.GatewayNamespace = in.ParentLabels[kube.LabelNamespaceGateway]
	}
	if out.Status.GatewayNamespace != "" {
		labels[kube.LabelNamespaceGateway] = out.Status.GatewayNamespace
	}
	if err := checkDerived(in, root, ns, labels); err != nil {
		return nil, err
	}

	nsObj, err := namespaceResource(ns, labels, root)
	if err != nil {
		return nil, err
	}
	out.Resources = append(out.Resources, nsObj)
	if owning {
		if err := owningResources(in, ns, apex, out); err != nil {
			return nil, err
		}
	}
	if len(in.Spec.ResourceQuotas) > 0 {
		r, err := quotaResource(in, ns)
		if err != nil {
			return nil, err
		}
		out.Resources = append(out.Resources, r)
	}
	report(in, out)
	return out, nil
}

// checkName refuses a tenant name that is not a DNS label without '-':
// '-' joins the names of nested tenants into namespace names.
func checkName(name string) error {
	if len(validation.IsDNS1123Label(name)) > 0 || strings.Contains(name, "-") {
		return refuse("tenant name %q must be a DNS label without '-' (a-z and 0-9, at most %d characters): '-' joins the names of nested tenants into namespace names", name, validation.DNS1123LabelMaxLength)
	}
	return nil
}

// checkDerived refuses a bad tenant name, then a namespace name or label
// value derived from it that the API server would reject. Names concatenate
// down the tenant tree and hosts grow with every level, so a valid claim can
// derive an invalid one; refused here, the Tenant says which value is too
// long and where it came from, instead of its namespace failing to apply with
// an error on a composed resource.
func checkDerived(in Input, root bool, ns string, labels map[string]string) error {
	if err := checkName(in.Name); err != nil {
		return err
	}
	if !root {
		from := fmt.Sprintf("the parent namespace %s, '-' and the tenant name", in.Parent)
		if in.Parent == in.Platform.IngressName {
			from = "'tenant-' and the tenant name"
		}
		if err := checkValue("namespace name", ns, from, "choose a shorter tenant name", validation.DNS1123LabelMaxLength, validation.IsDNS1123Label(ns)); err != nil {
			return err
		}
	}
	if err := checkNestedHost(in, root); err != nil {
		return err
	}
	// The gateway label needs no check: it is a namespace name, this one
	// (checked above) or the one the parent's label already holds.
	host, ok := labels[kube.LabelNamespaceHost]
	if !ok {
		return nil
	}
	from, fix := "spec.host", "set a shorter spec.host"
	switch {
	case in.Spec.Host != "":
	case root:
		from, fix = "platform setting publishing.host", "shorten publishing.host"
	default:
		from = fmt.Sprintf("the tenant name under the parent's host %s", in.ParentLabels[kube.LabelNamespaceHost])
		fix = "choose a shorter tenant name or set spec.host"
	}
	return checkValue("namespace label "+kube.LabelNamespaceHost, host, from, fix, validation.LabelValueMaxLength, validation.IsValidLabelValue(host))
}

// checkNestedHost refuses a spec.host outside the parent's zone for a
// tenant nested below the publishing tenant's direct children: the host
// label is the tenant's delegation (see Who may attach in docs/design.md),
// and a nested tenant may only be delegated part of its parent's. The one
// exception, at every depth as for a direct child, is a tenant that owns
// its Gateway given an apex of its own outside the platform's zone
// (publishing.host and every name under it), such as customer1.example:
// a name of no other tenant's delegation, which only callers the
// tenant-host-policy trusts can set. A name inside the platform's zone but
// outside the parent's stays refused at any depth below the direct
// children, whatever the admission policies do: it is another tenant's.
// Where the publishing namespace's host label names another zone than
// publishing.host (Cozystack's values and the platform settings disagree),
// a name in either zone is refused, naming both (labelZone).
func checkNestedHost(in Input, root bool) error {
	if root || in.Spec.Host == "" || in.Parent == in.Platform.IngressName {
		return nil
	}
	h, p := in.Spec.Host, in.ParentLabels[kube.LabelNamespaceHost]
	if p != "" && inZone(h, p) {
		return nil
	}
	owning := in.Spec.Gateway != nil && *in.Spec.Gateway
	apex := in.Platform.Host
	if !owning {
		return refuse("spec.host %q must equal or be under the parent tenant's host %q (namespace %s): a nested tenant is delegated only part of its parent's zone; only a tenant with its own Gateway (spec.gateway) may be given an apex of its own outside the platform's zone %q", h, p, in.Parent, apex)
	}
	if apex == "" || inZone(h, apex) {
		return refuse("spec.host %q must equal or be under the parent tenant's host %q (namespace %s), or, for a tenant with its own Gateway, be an apex of its own outside the platform's zone %q: a nested tenant is delegated only part of its parent's zone", h, p, in.Parent, apex)
	}
	if z := labelZone(in); z != "" && inZone(h, z) {
		return refuse("spec.host %q must equal or be under the parent tenant's host %q (namespace %s): it is outside publishing.host %q but inside %q, the host label of the publishing tenant's namespace %s, so the platform settings and Cozystack's values disagree on the platform's zone, and a name in it may be another tenant's; set publishing.host to one apex in both", h, p, in.Parent, apex, z, in.Platform.IngressName)
	}
	return nil
}

// inZone says whether h is zone or a name under it.
func inZone(h, zone string) bool { return h == zone || strings.HasSuffix(h, "."+zone) }

// checkValue turns the validation errors of a derived value into a refusal
// that names it, its origin, its length and the limit.
func checkValue(what, value, from, fix string, limit int, errs []string) error {
	switch {
	case len(errs) == 0:
		return nil
	case len(value) > limit:
		return refuse("%s %q (from %s) is %d characters, over the limit of %d: %s", what, value, from, len(value), limit, fix)
	default:
		return refuse("%s %q (from %s, %d characters, at most %d) is invalid: %s", what, value, from, len(value), limit, strings.Join(errs, "; "))
	}
}

// owningResources are what a Gateway-owning tenant adds: its TenantGateway
// and, in existingSecret mode, the replica of the operator's Secret.
func owningResources(in Input, ns, apex string, out *Output) error {
	r, spec, err := gatewayResource(in, ns, apex)
	if err != nil {
		return err
	}
	out.Status.GatewayClassName, out.Status.CertMode = spec.GatewayClassName, string(spec.CertMode)
	out.Resources = append(out.Resources, r)
	if !replicaWanted(in.Platform, ns, spec) {
		return nil
	}
	rs, warning, err := replicaResources(in, ns)
	if err != nil {
		return err
	}
	out.Resources = append(out.Resources, rs...)
	if warning != "" {
		out.Warnings = append(out.Warnings, text.Truncate(warning))
	}
	return nil
}

// gatewayResource is the owning tenant's TenantGateway, named cozystack, in
// a cluster-scoped Object.
func gatewayResource(in Input, ns, apex string) (kube.Resource, v1alpha1.TenantGatewaySpec, error) {
	spec, err := gatewaySpec(in, ns, apex)
	if err != nil {
		return kube.Resource{}, spec, err
	}
	o, err := object(objectName("tenantgateway", ns), &v1alpha1.TenantGateway{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: TenantGateway, Namespace: ns},
		Spec:       spec,
	}, nil)
	return kube.Resource{Key: KeyTenantGateway, Object: o}, spec, err
}

// quotaResource is the tenant's ResourceQuota, in a cluster-scoped Object.
func quotaResource(in Input, ns string) (kube.Resource, error) {
	hard := corev1.ResourceList{}
	for k, v := range in.Spec.ResourceQuotas {
		hard[corev1.ResourceName(k)] = v
	}
	o, err := object(objectName("resourcequota", ns), &corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Name: QuotaName, Namespace: ns},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
	}, nil)
	return kube.Resource{Key: KeyResourceQuota, Object: o}, err
}

// namespaceOf is tenant-<name> under the publishing tenant's namespace,
// <parent>-<name> below it; the root tenant is its own namespace.
func namespaceOf(in Input, root bool) string {
	switch {
	case root:
		return in.Parent
	case in.Parent == in.Platform.IngressName:
		return tenantNamespacePrefix + in.Name
	default:
		return in.Parent + "-" + in.Name
	}
}

// apexOf is spec.host, else the platform host for the root tenant, else
// <name>.<parent apex>; empty when the parent has none.
func apexOf(in Input, root bool) string {
	switch {
	case in.Spec.Host != "":
		return in.Spec.Host
	case root:
		return in.Platform.Host
	}
	if p := in.ParentLabels[kube.LabelNamespaceHost]; p != "" {
		return in.Name + "." + p
	}
	return ""
}

// namespaceResource composes the tenant namespace directly; the root tenant's
// namespace exists already and is only patched, through an Object that may
// observe and update it but never create or delete it.
func namespaceResource(ns string, labels map[string]string, root bool) (kube.Resource, error) {
	n := &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels},
	}
	if !root {
		return kube.Resource{Key: KeyNamespace, Object: n}, nil
	}
	o, err := object(objectName("namespace", ns), n, xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionUpdate})
	return kube.Resource{Key: KeyNamespace, Object: o}, err
}

// gatewaySpec derives the TenantGateway of an owning tenant (see Tenants in
// docs/design.md).
func gatewaySpec(in Input, ns, apex string) (v1alpha1.TenantGatewaySpec, error) {
	p := in.Platform
	if apex == "" {
		return v1alpha1.TenantGatewaySpec{}, refuse("the tenant has no apex domain: set spec.host, or give the parent tenant %s a host, before asking for a Gateway", in.Parent)
	}
	class := in.Spec.GatewayClass
	if class == "" {
		class = p.ClassName
	}
	allowed := append([]string{p.ClassName}, p.TenantSelectableClasses...)
	if !slices.Contains(allowed, class) {
		return v1alpha1.TenantGatewaySpec{}, refuse("gatewayClass %q is not allowed for tenants: allowed classes are [%s] (gateway.className and gateway.tenantSelectableClasses)", class, text.Quoted(allowed))
	}
	edge := slices.Contains(p.EdgeTerminatedClasses, class)
	publishing := ns == p.IngressName
	if publishing && edge != slices.Contains(p.EdgeTerminatedClasses, p.ClassName) {
		return v1alpha1.TenantGatewaySpec{}, refuse("the publishing tenant %s cannot use gatewayClass %q: it terminates TLS differently from gateway.className %q, and the cluster issuers' HTTP-01 solver follows gateway.className, so every HTTP-01 certificate in the cluster would stop issuing; change gateway.className instead", ns, class, p.ClassName)
	}
	spec := v1alpha1.TenantGatewaySpec{Apex: apex, GatewayClassName: class}
	// certMode, first match wins: edge, existingSecret, then the solver.
	switch {
	case edge:
		spec.CertMode = v1alpha1.CertModeEdge
	case p.WildcardSecret != "":
		spec.CertMode = v1alpha1.CertModeExistingSecret
		spec.WildcardSecretRef = &v1alpha1.LocalSecretReference{Name: p.WildcardSecret}
	default:
		if err := acmeSettings(p, &spec); err != nil {
			return spec, err
		}
	}
	if publishing {
		publishingExtras(p, edge, &spec)
	}
	if err := pinSettings(p, ns, &spec); err != nil {
		return spec, err
	}
	return spec, nil
}

// pinSettings gives the TenantGateway the pin the platform settings hold
// for its namespace, refusing one the Gateway would refuse with a message
// that names the setting (see Pinning an address in docs/design.md).
func pinSettings(p Platform, ns string, spec *v1alpha1.TenantGatewaySpec) error {
	pin, ok := p.Infrastructure[ns]
	if !ok {
		return nil
	}
	if len(pin.Labels) > 0 || len(pin.Annotations) > 0 {
		spec.Infrastructure = &v1alpha1.GatewayInfrastructure{Labels: pin.Labels, Annotations: pin.Annotations}
	}
	spec.Addresses = pin.Addresses
	path := pathInfrastructure.Key(ns)
	errs := append(tgwspec.ValidateInfrastructure(path, spec.Infrastructure), tgwspec.ValidateAddresses(path.Child("addresses"), spec.Addresses)...)
	if len(errs) > 0 {
		return refuse("platform setting %s cannot pin the Gateway: %s", path, errs.ToAggregate().Error())
	}
	return nil
}

// publishingExtras are what only the publishing tenant's Gateway carries:
// the attached platform namespaces and, unless it is an edge Gateway, the
// passthrough listeners of the platform services exposed while Gateway API
// publishing is enabled.
func publishingExtras(p Platform, edge bool, spec *v1alpha1.TenantGatewaySpec) {
	for _, a := range p.AttachedNamespaces {
		spec.AttachedNamespaces = append(spec.AttachedNamespaces, v1alpha1.DNSLabel(a))
	}
	if edge || !p.GatewayEnabled {
		return
	}
	for _, s := range p.TLSPassthroughServices {
		if slices.Contains(p.ExposedServices, s) {
			spec.TLSPassthroughServices = append(spec.TLSPassthroughServices, v1alpha1.DNSLabel(s))
		}
	}
}

// acmeSolvers are the values of publishing.certificates.solver: the cert
// modes of an ACME Issuer.
var acmeSolvers = []v1alpha1.CertMode{v1alpha1.CertModeHTTP01, v1alpha1.CertModeDNS01}

// acmeSettings fills the http01/dns01 fields, refusing unsupported values
// with the allowed list. Edge and existingSecret never read them.
func acmeSettings(p Platform, spec *v1alpha1.TenantGatewaySpec) error {
	if !slices.Contains(acmeSolvers, v1alpha1.CertMode(p.Solver)) {
		return refuse("publishing.certificates.solver %q is not supported: use [%s]", p.Solver, text.Quoted(acmeSolvers))
	}
	spec.CertMode = v1alpha1.CertMode(p.Solver)
	if err := issuerSettings(p, spec); err != nil {
		return err
	}
	if spec.CertMode != v1alpha1.CertModeDNS01 {
		return nil
	}
	spec.DNS01 = tgwspec.PlatformDNS01(p.DNS01)
	if !slices.Contains(v1alpha1.DNS01ProviderNames, spec.DNS01.Provider) {
		return refuse("publishing.certificates.dns01.provider %q is not supported: use [%s]", spec.DNS01.Provider, text.Quoted(v1alpha1.DNS01ProviderNames))
	}
	if errs := tgwspec.Validate(tgwspec.Defaulted(*spec)); len(errs) > 0 {
		return refuse("publishing.certificates.dns01 does not make a valid TenantGateway: %s", strings.ReplaceAll(errs.ToAggregate().Error(), "spec.dns01", "publishing.certificates.dns01"))
	}
	return nil
}

// pathIssuerName is the platform setting that names the ACME server.
var pathIssuerName = field.NewPath("publishing", "certificates", "issuerName")

// issuerSettings names the ACME server of the TenantGateway: a built-in
// issuer, or a server of publishing.certificates.acmeServers, which the
// TenantGateway carries whole in spec.acme under the same name (see Platform
// settings: ACME servers in docs/design.md). Only the selected server is
// judged, so a broken entry nobody names stops no tenant.
func issuerSettings(p Platform, spec *v1alpha1.TenantGatewaySpec) error {
	for _, b := range v1alpha1.IssuerNames {
		if _, ok := p.ACMEServers[string(b)]; ok {
			// Which of the two would be meant is anybody's guess.
			return refuse("platform setting %s redefines the built-in issuer %q: give that server another name", pathACMEServers.Key(string(b)), b)
		}
	}
	name := v1alpha1.IssuerName(p.IssuerName)
	spec.IssuerName = name
	if slices.Contains(v1alpha1.IssuerNames, name) {
		return nil
	}
	a, ok := p.ACMEServers[p.IssuerName]
	if !ok {
		defined := slices.Clone(v1alpha1.IssuerNames)
		for _, n := range slices.Sorted(maps.Keys(p.ACMEServers)) {
			defined = append(defined, v1alpha1.IssuerName(n))
		}
		return refuse("%s (the built-in issuers, then the servers %s defines)", field.NotSupported(pathIssuerName, name, defined).Error(), pathACMEServers)
	}
	var errs field.ErrorList
	if msgs := validation.IsDNS1123Label(p.IssuerName); len(msgs) > 0 {
		errs = append(errs, field.Invalid(pathIssuerName, name, "the name of an ACME server becomes the TenantGateway's spec.issuerName, a DNS label: "+strings.Join(msgs, "; ")))
	}
	errs = append(errs, tgwspec.ValidateACMEServer(pathACMEServers.Key(p.IssuerName), &a)...)
	if len(errs) > 0 {
		return refuse("%s %q does not name a valid ACME server: %s", pathIssuerName, name, errs.ToAggregate().Error())
	}
	spec.ACME = a.DeepCopy()
	return nil
}

// objectName is unique cluster-wide: Objects of a LegacyCluster XR are
// cluster-scoped.
func objectName(kind, ns string) string { return ns + "-" + kind }

// object wraps a manifest in a cluster-scoped provider-kubernetes Object:
// a LegacyCluster XR cannot compose namespaced resources itself. It names
// the project's own ProviderConfig: without a reference the Object would
// get the schema default, "default", which is the platform's to define and
// may point at another cluster (docs/design.md, "The provider's identity").
func object(name string, manifest any, policies xpv2.ManagementPolicies) (*kclusterv1alpha2.Object, error) {
	raw, err := jsonobj.Manifest(manifest)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the manifest of %s: %w", name, err)
	}
	o := &kclusterv1alpha2.Object{
		TypeMeta:   metav1.TypeMeta{APIVersion: kclusterv1alpha2.SchemeGroupVersion.String(), Kind: kclusterv1alpha2.ObjectKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kube.LabelManagedBy: kube.ManagedBy}},
		Spec:       kclusterv1alpha2.ObjectSpec{ForProvider: kclusterv1alpha2.ObjectParameters{Manifest: raw}},
	}
	o.Spec.ProviderConfigReference = &xpv2.Reference{Name: kube.ProviderConfigName}
	o.Spec.ManagementPolicies = policies
	return o, nil
}
