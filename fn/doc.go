// Package fn is the thin edge of function-tenant-gateway: it turns a
// RunFunctionRequest into the typed inputs of the pure computations
// (fn/gateway) and their outputs into a RunFunctionResponse. It holds no
// composition rules of its own.
package fn
