// Package v1beta1 contains the input of function-tenant-gateway.
// +kubebuilder:object:generate=true
// +groupName=fn.gateway.cozystack.io
// +versionName=v1beta1
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Defaults used when the Composition passes no input, or leaves a field empty.
const (
	DefaultCertManagerNamespace = "cozy-cert-manager"
	DefaultPlatformConfigName   = "tenant-gateway-platform"
)

// Input configures one pipeline step of function-tenant-gateway. Every field
// is optional: a Composition that passes no input at all gets the defaults.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=crossplane
type Input struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// CertManagerNamespace is the namespace cert-manager's ACME HTTP-01
	// challenge routes live in. The Gateway's port-80 listener admits routes
	// from it and from the TenantGateway's own namespace only.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	CertManagerNamespace string `json:"certManagerNamespace,omitempty"`

	// PlatformConfigName is the EnvironmentConfig holding the platform
	// settings the Tenant composition derives TenantGateways from.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PlatformConfigName string `json:"platformConfigName,omitempty"`
}

// WithDefaults returns a copy of the input with every empty field defaulted.
func (in Input) WithDefaults() Input {
	out := in
	if out.CertManagerNamespace == "" {
		out.CertManagerNamespace = DefaultCertManagerNamespace
	}
	if out.PlatformConfigName == "" {
		out.PlatformConfigName = DefaultPlatformConfigName
	}
	return out
}

// SchemeGroupVersion is the group and version of the function input.
var SchemeGroupVersion = schema.GroupVersion{Group: "fn.gateway.cozystack.io", Version: "v1beta1"}
