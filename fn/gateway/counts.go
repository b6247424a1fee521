package gateway

import (
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// countByState counts every item by its state. The status lists are cut
// (see Bounds in docs/design.md); what the metrics report is not (see
// Metrics in docs/design.md).
func countByState[T any, S comparable](items []T, state func(T) S) map[S]int {
	out := make(map[S]int)
	for _, it := range items {
		out[state(it)]++
	}
	return out
}

func claimState(c *claim) v1alpha1.HostnameState { return c.state }

func childState(c *child) v1alpha1.ChildApexState { return c.state }
