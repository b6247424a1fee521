package gateway

import (
	"fmt"

	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// guard refuses to compose an object that exists at the name the function
// derived but is not ours (see Ownership guard in docs/design.md): Crossplane would otherwise adopt it or
// fight its owner. Objects Crossplane observed under their composition
// resource name are ours by construction; the rest were probed by name.
// It returns the resources to compose, those that needed a probe (refused
// or not), and one message per refusal.
func guard(in *Input, resources []kube.Resource) (kept, probed []kube.Resource, refused []string) {
	kept = resources[:0:0]
	for _, r := range resources {
		if _, ours := in.Observed[r.Key]; ours {
			kept = append(kept, r)
			continue
		}
		probed = append(probed, r)
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
	return kept, probed, refused
}
