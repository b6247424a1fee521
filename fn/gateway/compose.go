package gateway

import (
	"fmt"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// Input is everything one run knows about one TenantGateway.
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
	Observed map[string]*ObservedResource
	// Probes are the look-ups by name of what the function is about to
	// compose but Crossplane has not observed as ours (see ProbesNeeded).
	Probes map[string]Probe
	// GatewayClass named by the spec; nil when it does not exist.
	GatewayClass *Class
	// NamedNamespaces are the namespaces looked up by name: the
	// TenantGateway's own, the attached ones and those of observed namespace
	// patches. A nil value means the namespace does not exist.
	NamedNamespaces map[string]*Namespace
	// Previous is the status the last run wrote.
	Previous PreviousStatus

	// served maps the listener names being served to their hostnames: the
	// observed Gateway's, else those the XR's status remembers.
	served map[string]string
}

// Object is a typed Kubernetes object the function composes.
type Object interface {
	runtime.Object
	metav1.Object
}

// Resource is one composed object under its stable composition resource name.
type Resource struct {
	Key    string
	Object Object
}

// Output is what one TenantGateway composes and reports.
type Output struct {
	// CertMode is the mode in force.
	CertMode v1alpha1.CertMode
	// Resources in a fixed order; keys are unique.
	Resources []Resource

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

	// planned are the resources before the ownership guard.
	planned []Resource
}

// An InvalidSpecError lists everything wrong with a TenantGateway's spec.
type InvalidSpecError struct {
	Errors field.ErrorList
}

func (e *InvalidSpecError) Error() string {
	return fmt.Sprintf("invalid TenantGateway spec: %s", e.Errors.ToAggregate().Error())
}

// Compose validates the TenantGateway and computes its composed resources
// and status from the routes and namespaces it observes.
func Compose(in Input) (*Output, error) {
	in.Spec = Defaulted(in.Spec)
	if errs := Validate(in.Spec); len(errs) > 0 {
		return nil, &InvalidSpecError{Errors: errs}
	}
	mode := in.Spec.CertMode
	// The output must not depend on the order the cluster listed things in.
	in.Namespaces = slices.Clone(in.Namespaces)
	sort.Slice(in.Namespaces, func(i, j int) bool { return in.Namespaces[i].Name < in.Namespaces[j].Name })

	in.served = servedListeners(&in)

	t := newTenancy(&in)
	children := discoverChildren(&in, t)
	claims, hostless := collectClaims(&in, t)
	judgeShape(&in, t, claims, children)
	contests := resolveConflicts(claims)

	var p *plan
	if mode == v1alpha1.CertModeHTTP01 {
		p = planHTTP01(&in, t, claims, contests)
	} else {
		p = planWildcard(&in, t, claims, contests, children)
	}
	misselected(&in, claims)

	left := leftOutOf(claims, children, p.droppedPins)
	out := &Output{
		CertMode:           mode,
		Hostnames:          hostnameStatus(&in, claims),
		Conflicts:          conflictStatus(contests),
		ConflictCount:      len(contests),
		ChildApexes:        childApexStatus(children),
		ChildApexCount:     len(children),
		HostnamelessRoutes: hostnamelessStatus(&in, t, p, hostless),
		Listeners:          len(p.listeners),
		LeftOut:            left.counts,
		HostnameStates:     countByState(claims, claimState),
		ChildApexStates:    countByState(children, childState),
	}
	var err error
	if out.planned, err = planResources(&in, p, children); err != nil {
		return nil, err
	}

	var refused []string
	out.Resources, refused = guard(&in, out.planned)
	out.Unready = len(refused) > 0
	out.Ready = make(map[string]bool, len(out.Resources))
	for _, r := range out.Resources {
		out.Ready[r.Key] = ready(&in, r.Key, in.Observed[r.Key], p.listeners)
	}
	if _, composed := out.Ready[KeyGateway]; composed {
		out.ListenerStatus = listenerStatus(&in, p.listeners, in.Observed[KeyGateway])
	}
	f := findings{contests: contests, leftOut: left, causes: routeCauses(claims, contests, t.foreign, children), refused: refused}
	f.gatewayReady = gatewayReady(&in, refused, p.listeners, out.ListenerStatus)
	out.Conditions = []Condition{
		f.gatewayReady,
		listenersReady(&in, out.LeftOut),
		routesAccepted(f.causes, len(claims), len(out.Hostnames)),
	}
	out.Digests = digestsOf(&in, f, out.ListenerStatus)
	out.Warnings = warnings(&in, f, out)
	return out, nil
}

// servedListeners maps the listeners being served to their hostnames: those
// of the observed Gateway, else, when the Gateway is not observed (the first
// run, or a re-created Gateway), those the XR's status remembers, so that
// the budgets still keep what was served.
func servedListeners(in *Input) map[string]string {
	gw := in.Observed[KeyGateway]
	if gw == nil {
		return in.Previous.Listeners
	}
	served := make(map[string]string, len(gw.ListenerNames))
	for _, n := range gw.ListenerNames {
		served[n] = gw.ListenerHostnames[n]
	}
	return served
}

// planResources lists every object this mode composes, before the ownership
// guard: the Gateway, the Issuer and Certificates of the ACME modes, the
// redirect route, and the namespace patches.
func planResources(in *Input, p *plan, children []*child) ([]Resource, error) {
	mode := in.Spec.CertMode
	planned := []Resource{{Key: KeyGateway, Object: gatewayObject(in, p.listeners)}}
	switch mode {
	case v1alpha1.CertModeHTTP01:
		planned = append(planned, Resource{Key: KeyIssuer, Object: issuerObject(in)})
		for _, s := range p.hostListeners {
			planned = append(planned, Resource{Key: CertificateKey(s.name), Object: hostCertificate(in, s.name, s.hostname)})
		}
	case v1alpha1.CertModeDNS01:
		planned = append(planned,
			Resource{Key: KeyIssuer, Object: issuerObject(in)},
			Resource{Key: KeyCertificateWildcard, Object: wildcardCertificate(in, childNames(in, children))},
		)
	case v1alpha1.CertModeExistingSecret, v1alpha1.CertModeEdge:
		// No Issuer and no Certificate: the operator's Secret, or TLS in
		// front of the Gateway.
	}
	if mode != v1alpha1.CertModeEdge {
		// The edge in front of an edge-mode Gateway performs the redirect.
		planned = append(planned, Resource{Key: KeyRedirect, Object: redirectObject(in)})
	}
	patches, err := namespacePatches(in)
	if err != nil {
		return nil, err
	}
	return append(planned, patches...), nil
}
