// Package v1alpha1 contains the TenantGateway composite resource, served by
// the XRD tenantgateways.gateway.cozystack.io.
// +kubebuilder:object:generate=true
// +groupName=gateway.cozystack.io
// +versionName=v1alpha1
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group, version and kind of the TenantGateway composite resource.
const (
	Group   = "gateway.cozystack.io"
	Version = "v1alpha1"
	Kind    = "TenantGateway"
)

// SchemeGroupVersion is the group and version of this package.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// TenantGatewayGroupVersionKind is the GVK of the TenantGateway XR.
var TenantGatewayGroupVersionKind = SchemeGroupVersion.WithKind(Kind)
