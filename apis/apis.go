// Package apis holds the Go types of the APIs this project serves: the
// TenantGateway composite resource (gateway/v1alpha1) and the input of the
// composition function (fn/v1beta1). The XRD and CRD YAML under package/ are
// generated from these types by `make generate`, and docs/reference.md from
// that YAML, the platform settings and the function's flags
// (internal/refgen); generate_test.go fails when either is stale.
package apis
