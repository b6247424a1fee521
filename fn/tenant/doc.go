// Package tenant derives what one Tenant claim composes from the platform
// settings (see Tenants in docs/design.md): the tenant namespace with its
// inheritance labels, an optional ResourceQuota and, for a tenant that owns
// a Gateway, its TenantGateway. Like fn/gateway it is a pure computation over typed inputs.
package tenant
