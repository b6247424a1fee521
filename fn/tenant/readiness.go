package tenant

import "github.com/cozystack/function-tenant-gateway/fn/kube"

// report fills in what a derived tenant reports of what it composes: the
// readiness of each resource and the conditions besides Accepted.
func report(in Input, out *Output) {
	out.Ready = readiness(in, out.Resources)
	if c, ok := gatewayReady(in, out); ok {
		out.Conditions = append(out.Conditions, c)
	}
	if c, warning, ok := classesFound(in); ok {
		out.Conditions = append(out.Conditions, c)
		if warning != "" {
			out.Warnings = append(out.Warnings, warning)
		}
	}
	if c, warning, ok := valuesAgree(in, in.Spec.Gateway != nil && *in.Spec.Gateway); ok {
		out.Conditions = append(out.Conditions, c)
		if warning != "" {
			out.Warnings = append(out.Warnings, warning)
		}
	}
}

// readiness maps each resource the tenant composes to whether it is ready,
// from what Crossplane observed of it.
func readiness(in Input, resources []kube.Resource) map[string]bool {
	out := make(map[string]bool, len(resources))
	for _, r := range resources {
		out[r.Key] = ready(in, r.Key)
	}
	return out
}

// ready reports whether one composed resource is ready. The replica holder
// is ready once it has observed the Secret, the replica or someone else's,
// which the listeners then use as it is; a Namespace composed directly once
// it exists (namespaces have no conditions); a provider-kubernetes Object
// once it is Ready and Synced. A resource not observed yet is not ready.
func ready(in Input, key string) bool {
	o := in.Observed[key]
	switch {
	case key == KeyReplica:
		return in.WildcardSecret != nil
	case o == nil:
		return false
	case key == KeyNamespace && len(o.Conditions) == 0:
		return true
	default:
		return kube.ObjectReady(o)
	}
}
