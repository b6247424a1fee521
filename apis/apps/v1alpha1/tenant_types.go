package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TenantSpec is what a tenant asks for.
type TenantSpec struct {
	// Host is the tenant's own apex. Empty derives <name>.<parent apex>. Only
	// trusted callers may set it (admission policy tenant-host-policy).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	// +optional
	Host string `json:"host,omitempty"`

	// Gateway true gives the tenant its own Gateway; unset or false publishes
	// through the nearest ancestor's.
	// +optional
	Gateway *bool `json:"gateway,omitempty"`

	// GatewayClass of an owning tenant's Gateway; empty selects the platform
	// default. Ignored when the tenant does not own a Gateway.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	GatewayClass string `json:"gatewayClass,omitempty"`

	// ResourceQuotas become a ResourceQuota in the tenant namespace, such as
	// count/certificates.cert-manager.io: "10".
	// +optional
	ResourceQuotas map[string]resource.Quantity `json:"resourceQuotas,omitempty"`
}

// TenantStatus is what the Tenant composition derived.
type TenantStatus struct {
	// Namespace of the tenant.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Apex of the tenant.
	// +optional
	Apex string `json:"apex,omitempty"`
	// GatewayNamespace is the namespace of the Gateway the tenant publishes
	// through; empty when none.
	// +optional
	GatewayNamespace string `json:"gatewayNamespace,omitempty"`
	// GatewayClassName of the tenant's own Gateway.
	// +optional
	GatewayClassName string `json:"gatewayClassName,omitempty"`
	// CertMode of the tenant's own Gateway.
	// +optional
	CertMode string `json:"certMode,omitempty"`
}

// An XTenant is a tenant of the platform: a namespace, its inheritance
// labels, and, for a tenant that owns one, a TenantGateway. Tenants create
// it through the namespaced Tenant claim. ACCEPTED is Derived, or Refused
// (the Accepted condition's message says why); TENANTGATEWAY is the reason
// of its TenantGateway's GatewayReady condition (Reconciled, or the cause:
// GatewayClassNotFound, ListenersNotReady, …), or of Crossplane's Ready
// while GatewayReady has nothing to say (Creating).
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="NAMESPACE",type="string",JSONPath=".status.namespace"
// +kubebuilder:printcolumn:name="APEX",type="string",JSONPath=".status.apex"
// +kubebuilder:printcolumn:name="GATEWAY",type="string",JSONPath=".status.gatewayNamespace"
// +kubebuilder:printcolumn:name="ACCEPTED",type="string",JSONPath=".status.conditions[?(@.type=='Accepted')].reason"
// +kubebuilder:printcolumn:name="TENANTGATEWAY",type="string",JSONPath=".status.conditions[?(@.type=='TenantGatewayReady')].reason"
type XTenant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec   TenantSpec   `json:"spec,omitempty"`
	Status TenantStatus `json:"status,omitempty"`
}
