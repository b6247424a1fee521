package kube

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/cozystack/function-tenant-gateway/fn/acme"
)

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

// Older is the oldest of the observed generations gens when it is older
// than the resource's generation, else 0. A controller that writes no
// observedGeneration (0) is taken at its word.
func (o *ObservedResource) Older(gens ...int64) int64 {
	var oldest int64
	for _, g := range gens {
		if g > 0 && g < o.Generation && (oldest == 0 || g < oldest) {
			oldest = g
		}
	}
	return oldest
}

// ObjectReady is the readiness of a provider-kubernetes Object: it reports
// the object it manages Ready and in sync. A namespace patch and a Tenant's
// Objects are judged alike.
func ObjectReady(o *ObservedResource) bool {
	return o.Conditions[string(xpv2.TypeReady)] == string(metav1.ConditionTrue) && o.Conditions[string(xpv2.TypeSynced)] == string(metav1.ConditionTrue)
}
