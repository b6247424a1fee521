// Package gateway computes what one TenantGateway composes: the Gateway, the
// cert-manager Issuer and the http→https redirect route (docs/design.md). It is a pure
// computation over typed inputs, with no gRPC and no function SDK, so that it
// can be tested and benchmarked on its own; fn/ turns requests into Input and
// Output into responses.
package gateway
