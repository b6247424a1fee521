package gateway

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// Observations of the cluster beyond routes and namespaces, as the edge
// decodes them from the request.

// staleStatus is the generation the Gateway's own Accepted and Programmed
// conditions describe when it is older than the Gateway's (its controller
// has not seen the spec Crossplane applied last), else 0.
func staleStatus(o *kube.ObservedResource) int64 {
	return o.Older(o.StatusGenerations[condAccepted], o.StatusGenerations[condProgrammed])
}

// staleListener is the generation a listener's conditions describe when it
// is older than the Gateway's, else 0.
func staleListener(o *kube.ObservedResource, name string) int64 {
	return o.Older(o.ListenerGenerations[name])
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
