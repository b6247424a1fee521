package gateway

import "github.com/cozystack/function-tenant-gateway/fn/kube"

// commonLabels are carried by every object the function composes.
func commonLabels(in *Input) map[string]string {
	return map[string]string{
		kube.LabelManagedBy:     kube.ManagedBy,
		kube.LabelTenantGateway: in.Name,
	}
}
