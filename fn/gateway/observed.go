package gateway

// Observations of the cluster beyond routes and namespaces, as the edge
// decodes them from the request.

// An ObservedResource is a composed resource Crossplane observed under its
// composition resource name: it exists, and is ours.
type ObservedResource struct {
	// Conditions maps a condition type to its status ("True", "False", …).
	Conditions map[string]string
	// Listeners maps a Gateway listener name to its conditions.
	Listeners map[string]map[string]string
	// ListenerNames are a Gateway's spec listener names, as last composed.
	ListenerNames []string
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
	// SupportedFeatures as the class's controller reports them.
	SupportedFeatures []string
}

// PreviousStatus is what the XR's status said after the last run, so that
// warnings are raised when something changes rather than on every run.
type PreviousStatus struct {
	// Conflicts maps a contested hostname to its losers, comma-joined.
	Conflicts map[string]string
	// LeftOut are the hostnames that were OverListenerLimit.
	LeftOut map[string]bool
}

// Condition status values.
const (
	statusTrue = "True"
)
