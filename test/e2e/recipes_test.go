//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestSeedRecipesEndAtACause: two troubleshooting recipes of the design
// seeds that no other test tries end, on the live control plane, at a
// condition naming the cause. A class name with a typo is
// GatewayReady=False/GatewayClassNotFound at once, naming the class. A
// Gateway whose LoadBalancer Service gets no address (the seeds' most common
// symptom: no allocator, or one out of addresses) is
// GatewayReady=False/GatewayNotProgrammed carrying Envoy Gateway's own
// reason and message (AddressNotAssigned): the class envoy-lb is Envoy
// Gateway's without the EnvoyProxy that gives the e2e proxies a ClusterIP,
// so its Service is a LoadBalancer, and no load-balancer controller runs
// here, as on a cluster without an allocator.
func TestSeedRecipesEndAtACause(t *testing.T) {
	t.Parallel()
	apply(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: envoy-lb}
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
`)
	namespace(t, "recipe-typo", nil)
	namespace(t, "recipe-lb", nil)
	apply(t, `
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata: {name: cozystack, namespace: recipe-typo}
spec: {apex: typo.example.org, gatewayClassName: cillium}
---
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata: {name: cozystack, namespace: recipe-lb}
spec: {apex: lb.example.org, gatewayClassName: envoy-lb}
`)
	eventually(t, oneTTL+settle, "GatewayReady=False GatewayClassNotFound naming the class cillium", func() (bool, string) {
		x := tgw(t, "recipe-typo", "cozystack")
		s, r, m := condition(x, "GatewayReady")
		return s == "False" && r == "GatewayClassNotFound" && strings.Contains(m, "cillium"), fmt.Sprintf("%s %s %q", s, r, m)
	})
	eventually(t, 2*oneTTL+settle, "GatewayReady=False GatewayNotProgrammed with Envoy Gateway's AddressNotAssigned", func() (bool, string) {
		x := tgw(t, "recipe-lb", "cozystack")
		s, r, m := condition(x, "GatewayReady")
		return s == "False" && r == "GatewayNotProgrammed" && strings.Contains(m, "AddressNotAssigned"), fmt.Sprintf("%s %s %q", s, r, m)
	})
}
