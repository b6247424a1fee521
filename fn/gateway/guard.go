package gateway

import "fmt"

// guard refuses to compose an object that exists at the name the function
// derived but is not ours (see Ownership guard in docs/design.md): Crossplane would otherwise adopt it or
// fight its owner. Objects Crossplane observed under their composition
// resource name are ours by construction; the rest were probed by name.
// It returns the resources to compose and one message per refusal.
func guard(in *Input, resources []Resource) ([]Resource, []string) {
	kept := resources[:0:0]
	var refused []string
	for _, r := range resources {
		if !needsProbe(in, r.Key) {
			kept = append(kept, r)
			continue
		}
		p := in.Probes[r.Key]
		// An object without a controller is nobody's, so not ours either,
		// even when the XR's uid is not known (as in a bare test request).
		if p.Exists && (p.ControllerUID == "" || p.ControllerUID != in.UID) {
			refused = append(refused, fmt.Sprintf("%s %s/%s exists but is not owned by TenantGateway %s; refusing to take over (delete it manually if you want the function to manage it)",
				r.Object.GetObjectKind().GroupVersionKind().Kind, r.Object.GetNamespace(), r.Object.GetName(), in.Name))
			continue
		}
		kept = append(kept, r)
	}
	return kept, refused
}

// ProbesNeeded lists the resources of an output that Crossplane has not
// observed as ours, so the edge can look them up by name before they are
// composed.
func ProbesNeeded(in *Input, out *Output) []Resource {
	var need []Resource
	for _, r := range out.planned {
		if needsProbe(in, r.Key) {
			need = append(need, r)
		}
	}
	return need
}

// needsProbe reports whether a resource must be looked up by name before it
// is composed: it is not observed as ours.
func needsProbe(in *Input, key string) bool {
	_, ours := in.Observed[key]
	return !ours
}
