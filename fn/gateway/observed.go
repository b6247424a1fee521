package gateway

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
)

// Observations of the cluster beyond routes and namespaces, as the edge
// decodes them from the request.

// An ObservedResource is a composed resource Crossplane observed under its
// composition resource name: it exists, and is ours.
type ObservedResource struct {
	// Name is the resource's metadata.name.
	Name string
	// Conditions maps a condition type to its status ("True", "False", …).
	Conditions map[string]string
	// Reasons and Messages map a condition type to the reason and message
	// its controller gave, as it gave them (unbounded: the function bounds
	// what it copies).
	Reasons, Messages map[string]string
	// Listeners maps a Gateway listener name to its conditions.
	Listeners map[string]map[string]string
	// ListenerNames are a Gateway's spec listener names, as last composed.
	ListenerNames []string
	// ListenerHostnames maps a Gateway's spec listener names to their
	// hostnames ("" for a listener without one).
	ListenerHostnames map[string]string
	// DNSNames are a Certificate's spec dnsNames.
	DNSNames []string
	// Record is the order ledger's record an order-ledger Object was last
	// applied with (nil when it does not decode).
	Record *acme.OrderRecord
	// Generation is a Gateway's metadata.generation; StatusGenerations
	// map its condition types, and ListenerGenerations its listener names,
	// to the observedGeneration their controller wrote with them (the
	// oldest of a listener's conditions), where it wrote one. A status of an
	// older generation describes a spec the controller has not seen yet.
	Generation          int64
	StatusGenerations   map[string]int64
	ListenerGenerations map[string]int64
}

// staleStatus is the generation the Gateway's own Accepted and Programmed
// conditions describe when it is older than the Gateway's (its controller
// has not seen the spec Crossplane applied last), else 0.
func (o *ObservedResource) staleStatus() int64 {
	return o.older(o.StatusGenerations[condAccepted], o.StatusGenerations[condProgrammed])
}

// staleListener is the generation a listener's conditions describe when it
// is older than the Gateway's, else 0.
func (o *ObservedResource) staleListener(name string) int64 {
	return o.older(o.ListenerGenerations[name])
}

// older is the oldest of the observed generations gens when it is older
// than the resource's generation, else 0. A controller that writes no
// observedGeneration (0) is taken at its word.
func (o *ObservedResource) older(gens ...int64) int64 {
	var oldest int64
	for _, g := range gens {
		if g > 0 && g < o.Generation && (oldest == 0 || g < oldest) {
			oldest = g
		}
	}
	return oldest
}

// A Probe is what a look-up by name found at a name the function is about to
// compose, when Crossplane has not observed it as ours.
type Probe struct {
	Exists bool
	// ControllerUID is the uid of the object's controller ownerReference.
	ControllerUID string
}

// A Class is the GatewayClass, as much as the function reads of the class.
type Class struct {
	Name string
	// ControllerName is the class's spec.controllerName.
	ControllerName string
	// SupportedFeatures as the class's controller reports them.
	SupportedFeatures []string
}

// PreviousStatus is what the XR's status said after the last run: the
// function's memory, so that warnings are raised when something changes
// rather than on every run, and the budgets keep what was served while the
// Gateway or the certificate is not observed.
type PreviousStatus struct {
	// Listeners maps the listener names status.listeners reported to their
	// hostnames.
	Listeners map[string]string
	// ChildApexes are the child apexes status.childApexes reported
	// Listening.
	ChildApexes map[string]bool
	// Digests are the digests of what was last warned about.
	Digests v1alpha1.StatusDigests
}

// Condition status values.
const (
	statusTrue  = string(metav1.ConditionTrue)
	statusFalse = string(metav1.ConditionFalse)
)
