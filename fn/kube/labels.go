package kube

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
	// LabelNamespaceHost is a tenant namespace's apex: the tenant layer
	// sets it, and the function reads it (and writes it on the namespaces
	// of the Tenants it composes).
	LabelNamespaceHost = "namespace.cozystack.io/host"
)

// ManagedBy is the value of LabelManagedBy.
const ManagedBy = "function-tenant-gateway"

// ProviderConfigName names provider-kubernetes' provider configs of this
// project: the ClusterProviderConfig the namespace patches use and the
// ProviderConfig of the Tenants' cluster-scoped Objects. One of their own,
// so an operator can scope who may create Objects that reference it and
// nothing composed follows the platform's "default" (see "Threat model" and
// "The provider's identity" in docs/design.md).
const ProviderConfigName = "function-tenant-gateway"
