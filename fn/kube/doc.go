// Package kube is what the function says alike of the objects it
// composes and observes, whichever computation composes them: an object
// under its composition resource name, what Crossplane observed of one,
// when a provider-kubernetes Object is ready, and the labels and the
// provider config name that composed objects and tenant namespaces carry.
// Both computations (fn/gateway for a TenantGateway, fn/tenant for a
// Tenant) and the edge that reads observations into them share these, so
// they live apart from either computation.
package kube
