// Package fn is the thin edge of function-tenant-gateway: it turns a
// RunFunctionRequest into the typed inputs of the pure computations
// (fn/gateway for a TenantGateway, fn/tenant for a Tenant) and their outputs
// into a RunFunctionResponse. It holds no composition rules of its own.
//
// Files, in the order a request meets them. The files of one kind use none of
// the other kind's names, and read.go and write.go none of either's:
//
//   - function.go: the gRPC service; RunFunction reads the function input
//     and hands the XR to the file of its kind. metrics.go counts the call.
//   - tenantgateway.go: a TenantGateway run: what it requires of the
//     cluster, what it reads of the observed state into gateway.Input, and
//     how it writes gateway.Output (routes.go reads the routes).
//   - tenant.go: a Tenant run, the same for tenant.Input and tenant.Output.
//   - read.go: the readers both kinds share: structpb values, observed
//     conditions, the platform settings, whether the requirements are met.
//   - write.go: the writers both kinds share: desired composed resources,
//     the XR's status and conditions, resource selectors.
//   - ttl.go: the default TTL, which the service and the metrics share.
//   - codec.go and wire.go: the gRPC codec that keeps route requirements
//     as bytes, and the protobuf wire reading behind it (see Lazy decoding
//     in docs/design.md).
package fn
