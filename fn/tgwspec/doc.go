// Package tgwspec is what a TenantGateway's spec means before anything is
// composed from it: the defaults the XRD applies, the checks that repeat the
// XRD's rules, and the DNS-01 provider blocks as the platform settings fill
// them. Two computations need it: fn/gateway validates the spec it reads,
// and fn/tenant validates the spec it derives from a Tenant and the
// platform settings before composing the TenantGateway, so that a refusal
// names the setting rather than a TenantGateway that would fail later. It
// lives apart from both so that fn/tenant needs nothing of fn/gateway.
package tgwspec
