// Package v1alpha1 contains the XTenant composite resource and its Tenant
// claim, served by the XRD xtenants.apps.cozystack.io.
// +kubebuilder:object:generate=true
// +groupName=apps.cozystack.io
// +versionName=v1alpha1
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group, version and kinds of the Tenant API.
const (
	Group     = "apps.cozystack.io"
	Version   = "v1alpha1"
	Kind      = "XTenant"
	ClaimKind = "Tenant"
)

// SchemeGroupVersion is the group and version of this package.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// XTenantGroupVersionKind is the GVK of the XTenant XR.
var XTenantGroupVersionKind = SchemeGroupVersion.WithKind(Kind)
