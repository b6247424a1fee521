package gateway

// Label keys the function writes and reads.
const (
	// LabelGateway marks the Gateway with the namespace it serves, and a
	// namespace with the Gateway namespace whose routes it may attach to.
	LabelGateway = "cozystack.io/gateway"
	// LabelManagedBy marks every object the function composes.
	LabelManagedBy = "cozystack.io/managed-by"
	// LabelTenantGateway names the TenantGateway an object belongs to.
	LabelTenantGateway = "cozystack.io/tenantgateway"
	// LabelPerListenerCert marks per-host Certificates, so operators can wait
	// on all of them with one selector.
	LabelPerListenerCert = "cozystack.io/per-listener-cert"
	// LabelNamespaceGateway is the namespace label listeners select on.
	LabelNamespaceGateway = "namespace.cozystack.io/gateway"
	// LabelNamespaceName is the label Kubernetes sets on every namespace.
	LabelNamespaceName = "kubernetes.io/metadata.name"
)

// ManagedBy is the value of LabelManagedBy.
const ManagedBy = "function-tenant-gateway"

// commonLabels are carried by every object the function composes.
func commonLabels(in *Input) map[string]string {
	return map[string]string{
		LabelManagedBy:     ManagedBy,
		LabelTenantGateway: in.Name,
	}
}
