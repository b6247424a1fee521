//go:build e2e

package e2e

// envoyController is the controllerName of Envoy Gateway, the class envoy
// (framework_test.go); route parent status it writes carries it.
const envoyController = "gateway.envoyproxy.io/gatewayclass-controller"
