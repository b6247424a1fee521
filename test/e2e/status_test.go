//go:build e2e

package e2e

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// listenerState finds one entry of status.listeners.
func listenerState(t *testing.T, ns, name, listener string) map[string]any {
	t.Helper()
	for _, l := range slice(tgw(t, ns, name), "status", "listeners") {
		if m, _ := l.(map[string]any); m["name"] == listener {
			return m
		}
	}
	return nil
}

// TestGatewayStatusDrivesReadiness: the Gateway's status, written the way a
// Gateway controller would write it (the harness patches the status
// subresource, since no dataplane runs here), drives status.listeners, the
// GatewayReady condition and the XR's readiness, to ready and back.
func TestGatewayStatusDrivesReadiness(t *testing.T) {
	t.Parallel()
	tenantNamespaces(t, "tenant-st", "example.org", nil)
	apply(t, `
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: tenant-st
spec:
  apex: example.org
`)
	apply(t, httpRoute("tenant-st", "www", "tenant-st", "cozystack", "www.example.org"))
	gw := waitGateway(t, "tenant-st", "cozystack", "listeners http and https-www-8a59b0a3", func(ls []string, _ *unstructured.Unstructured) bool {
		return fmt.Sprint(ls) == "[http= https-www-8a59b0a3=www.example.org]"
	})
	eventually(t, settle, "GatewayReady=False GatewayNotAccepted before any controller wrote status", func() (bool, string) {
		s, r, m := condition(tgw(t, "tenant-st", "cozystack"), "GatewayReady")
		return s == "False" && r == "GatewayNotAccepted" && m == "Underlying Gateway tenant-st/cozystack has not been accepted by its controller yet", fmt.Sprintf("%s %s %q", s, r, m)
	})

	// The controller accepts and programs the Gateway and both listeners;
	// cert-manager makes the Issuer and the Certificate Ready.
	gatewayStatus(t, gw, "True", nil)
	iss, _ := get(t, gvkIssuer, "tenant-st", "cozystack-gateway")
	readyStatus(t, iss)
	cert, found := get(t, gvkCertificate, "tenant-st", "cozystack-www-8a59b0a3-tls")
	if !found {
		t.Fatal("no Certificate cozystack-www-8a59b0a3-tls for www.example.org")
	}
	readyStatus(t, cert)
	eventually(t, settle, "GatewayReady=True Reconciled, both listeners ready, the TenantGateway Ready", func() (bool, string) {
		x := tgw(t, "tenant-st", "cozystack")
		s, r, m := condition(x, "GatewayReady")
		ready, _, _ := condition(x, "Ready")
		l := listenerState(t, "tenant-st", "cozystack", "https-www-8a59b0a3")
		return s == "True" && r == "Reconciled" && m == "Gateway tenant-st/cozystack programmed with 2 listeners" &&
			l["ready"] == true && ready == "True", fmt.Sprintf("GatewayReady %s %s %q; Ready %s; listener %v", s, r, m, ready, l)
	})

	// The https listener stops being programmed.
	gatewayStatus(t, gw, "True", map[string]string{"https-www-8a59b0a3": "False"})
	eventually(t, settle, "GatewayReady=False ListenersNotReady and the listener NotProgrammed", func() (bool, string) {
		x := tgw(t, "tenant-st", "cozystack")
		s, r, _ := condition(x, "GatewayReady")
		ready, _, _ := condition(x, "Ready")
		l := listenerState(t, "tenant-st", "cozystack", "https-www-8a59b0a3")
		return s == "False" && r == "ListenersNotReady" && l["ready"] == false && l["reason"] == "NotProgrammed" && ready == "False",
			fmt.Sprintf("GatewayReady %s %s; Ready %s; listener %v", s, r, ready, l)
	})

	// And the controller takes back its acceptance of the whole Gateway.
	gatewayStatus(t, gw, "False", nil)
	eventually(t, settle, "GatewayReady=False GatewayNotAccepted", func() (bool, string) {
		s, r, _ := condition(tgw(t, "tenant-st", "cozystack"), "GatewayReady")
		return s == "False" && r == "GatewayNotAccepted", fmt.Sprintf("%s %s", s, r)
	})
}

// gatewayStatus writes a Gateway's status the way its controller would. No
// Gateway controller runs here, so the harness plays it.
func gatewayStatus(t *testing.T, gw *unstructured.Unstructured, accepted string, programmed map[string]string) {
	t.Helper()
	now := "2026-01-01T00:00:00Z"
	cond := func(typ, status string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": typ, "message": "", "lastTransitionTime": now, "observedGeneration": gw.GetGeneration()}
	}
	var ls []any
	for _, l := range slice(gw, "spec", "listeners") {
		name := l.(map[string]any)["name"].(string)
		p := programmed[name]
		if p == "" {
			p = "True"
		}
		ls = append(ls, map[string]any{
			"name": name, "attachedRoutes": int64(0),
			"supportedKinds": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}},
			"conditions":     []any{cond("Accepted", "True"), cond("Programmed", p)},
		})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": gw.GetName(), "namespace": gw.GetNamespace()},
		"status":   map[string]any{"conditions": []any{cond("Accepted", accepted), cond("Programmed", accepted)}, "listeners": ls},
	}}
	statusApply(t, u)
}

// readyStatus marks a cert-manager object Ready, as cert-manager would.
func readyStatus(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": obj.GetAPIVersion(), "kind": obj.GetKind(),
		"metadata": map[string]any{"name": obj.GetName(), "namespace": obj.GetNamespace()},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "Ready", "message": "ready", "lastTransitionTime": "2026-01-01T00:00:00Z",
		}}},
	}}
	statusApply(t, u)
}
