package main

import (
	"strings"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// repeatsWarning starts the function's warning about repeated list entries
// (fn/gateway/warnings.go), which it accepts.
const repeatsWarning = "the spec repeats "

// checkSpecWarnings reports what the function accepts from the old chart
// but warns about; a refused spec is reported by preflight itself.
func checkSpecWarnings(t *v1alpha1.TenantGateway, out *gateway.Output, r *report) {
	accepted := true
	for _, w := range out.Warnings {
		if strings.HasPrefix(w, repeatsWarning) {
			r.add(warning, topicSpecs, "TenantGateway %s/%s: %s", t.Namespace, t.Name, w)
			accepted = false
		}
	}
	if accepted {
		r.add(info, topicSpecs, "TenantGateway %s/%s is accepted by the function", t.Namespace, t.Name)
	}
}
