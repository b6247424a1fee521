package gateway

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// Input is everything one run knows about one TenantGateway. Compose reads
// it and never writes it: what a phase derives from it, the phase returns.
type Input struct {
	// Name and Namespace of the TenantGateway.
	Name      string
	Namespace string
	// Spec of the TenantGateway, as observed (defaults are applied here).
	Spec v1alpha1.TenantGatewaySpec
	// CertManagerNamespace is admitted on the port-80 listener for ACME
	// HTTP-01 challenge routes.
	CertManagerNamespace string

	// Routes are every HTTPRoute and TLSRoute of the cluster; those that do
	// not attach to this Gateway from an admitted namespace are ignored.
	Routes []Route
	// Namespaces are the namespaces labelled as publishing through this
	// Gateway.
	Namespaces []Namespace
	// UID of the TenantGateway: the controller ownerReference of every
	// object that is ours.
	UID string
	// Observed are the composed resources Crossplane observed, by
	// composition resource name. The Gateway's listener names keep their
	// place when the listener budget is short.
	Observed map[string]*kube.ObservedResource
	// Probes are the look-ups by name of what the function is about to
	// compose but Crossplane has not observed as ours (see Output.Probes).
	Probes map[string]Probe
	// GatewayClass named by the spec; nil when it does not exist.
	GatewayClass *Class
	// NamedNamespaces are the namespaces looked up by name (see
	// NamedNamespaces). A nil value means the namespace does not exist.
	NamedNamespaces map[string]*Namespace
	// Previous is the status the last run wrote.
	Previous PreviousStatus
	// Now is the time of the run: the ACME order ledger counts orders
	// within a window of it (see Certificate orders in docs/design.md).
	Now time.Time
	// Quota is the ACME CA's order quota per registered domain, from the
	// platform settings.
	Quota acme.OrderQuota
	// LedgerNamespace holds the records of the order ledger: a platform
	// namespace no tenant writes.
	LedgerNamespace string
	// Ledger are the records of the order ledger of the apex's registered
	// domain, this TenantGateway's own included when it exists.
	Ledger []acme.OrderRecord
	// PlatformApex is the platform's apex (publishing.host): the order
	// ledger's branches are named under it.
	PlatformApex string
}

// Output is what one TenantGateway composes and reports.
type Output struct {
	// CertMode is the mode in force.
	CertMode v1alpha1.CertMode
	// Resources in a fixed order; keys are unique.
	Resources []kube.Resource
	// Probes are the resources to compose that Crossplane has not observed
	// as ours, in the same order: the edge looks each up by name, and the
	// ownership guard judges it from Input.Probes (see Ownership guard in
	// docs/design.md). Those the guard refused are among them.
	Probes []kube.Resource

	// Hostnames, Conflicts and ChildApexes are the status of the
	// same names (see APIs in docs/design.md).
	Hostnames   []v1alpha1.HostnameStatus
	Conflicts   []v1alpha1.ConflictStatus
	ChildApexes []v1alpha1.ChildApexStatus
	// ConflictCount is the number of contested hostnames, ChildApexCount
	// the number of child apexes.
	ConflictCount, ChildApexCount int
	// HostnamelessRoutes are the attached routes without hostnames.
	HostnamelessRoutes []v1alpha1.HostnamelessRouteStatus
	// Digests remember what this run warned about.
	Digests v1alpha1.StatusDigests
	// Listeners is the number of listeners on the Gateway.
	Listeners int
	// LeftOut counts the hostnames and child apexes a limit left out.
	LeftOut LeftOut
	// ReportsLeftOut counts the namespaces MaxRouteReports left without a
	// route report.
	ReportsLeftOut int
	// HostnameStates count every claim (the entries of status.hostnames
	// before its bound) by state, ChildApexStates every child apex.
	HostnameStates  map[v1alpha1.HostnameState]int
	ChildApexStates map[v1alpha1.ChildApexState]int

	// Ready maps the key of each resource to its readiness.
	Ready map[string]bool
	// Unready says the TenantGateway is not ready whatever its composed
	// resources say: the guard refused an object it needs (see Ownership
	// guard in docs/design.md).
	Unready bool
	// ListenerStatus mirrors the Gateway's listeners.
	ListenerStatus []v1alpha1.ListenerStatus
	// Conditions are the custom conditions (see Status and
	// conditions in docs/design.md).
	Conditions []Condition
	// Warnings are what changed since the last run, for Warning events.
	Warnings []string
	// Record is this TenantGateway's record of the order ledger, as
	// composed (nil when there is none to write); OrderQuota is the quota
	// in force and OrdersUsed the registered domain's orders of its window.
	Record     *acme.OrderRecord
	OrderQuota acme.OrderQuota
	OrdersUsed int
}

// An InvalidSpecError lists everything wrong with a TenantGateway's spec.
type InvalidSpecError struct {
	Errors field.ErrorList
}

func (e *InvalidSpecError) Error() string {
	return fmt.Sprintf("invalid TenantGateway spec: %s", e.Errors.ToAggregate().Error())
}
