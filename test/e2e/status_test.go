//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestEnvoyGatewayDrivesReadiness: the status Envoy Gateway writes on the
// Gateway drives status.listeners, the GatewayReady condition and the XR's
// readiness, to ready and back. The https listener's Secret does not exist
// at first, so Envoy Gateway refuses the listener (ResolvedRefs=False
// InvalidCertificateRef, Programmed=False) while accepting the Gateway; the
// test, playing cert-manager (which does not run here), reports the
// Certificate not Ready (the listener is CertificateNotReady with
// cert-manager's words, and a Warning says so), then writes the Secret and
// marks the Issuer and the Certificate Ready, and the listener becomes
// ready; deleting the Secret makes it unready again. The Gateway is
// Programmed once its proxy pod is reported ready (kubelet_test.go).
func TestEnvoyGatewayDrivesReadiness(t *testing.T) {
	t.Parallel()
	tenantNamespaces(t, "tenant-st", "example.org", nil)
	apply(t, envoyTenantGateway("tenant-st", "example.org"))
	apply(t, httpRoute("tenant-st", "www", "tenant-st", "cozystack", "www.example.org"))
	waitGateway(t, "tenant-st", "cozystack", "listeners http and https-www-8a59b0a3", func(ls []string, _ *unstructured.Unstructured) bool {
		return fmt.Sprint(ls) == "[http= https-www-8a59b0a3=www.example.org]"
	})
	const https = "https-www-8a59b0a3"
	eventually(t, settle, "Envoy Gateway: Gateway Accepted and Programmed, http ready, "+https+" refused for its missing Secret with route www attached", func() (bool, string) {
		gw, _ := get(t, gvkGateway, "tenant-st", "cozystack")
		a, _, _ := condition(gw, "Accepted")
		p, _, _ := condition(gw, "Programmed")
		h, l := listenerConds(gw, "http"), listenerConds(gw, https)
		return a == "True" && p == "True" &&
				strings.HasPrefix(h, "Accepted=True/Accepted Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs") &&
				l == "Accepted=True/Accepted Programmed=False/Invalid ResolvedRefs=False/InvalidCertificateRef attached=1",
			fmt.Sprintf("Accepted=%s Programmed=%s; http: %s; %s: %s", a, p, h, https, l)
	})
	// cert-manager's part, played: the Certificate not Ready while its
	// order is pending, the Secret not there yet.
	cert, found := get(t, gvkCertificate, "tenant-st", "cozystack-www-8a59b0a3-tls")
	if !found {
		t.Fatal("no Certificate cozystack-www-8a59b0a3-tls for www.example.org")
	}
	const issuing = "DoesNotExist: Issuing certificate as Secret does not exist"
	conditionStatus(t, cert, "Ready", "False", "DoesNotExist", "Issuing certificate as Secret does not exist")
	eventually(t, settle, "GatewayReady=False ListenersNotReady naming "+https+", which status.listeners reports CertificateNotReady with cert-manager's words, from the current generation", func() (bool, string) {
		x := tgw(t, "tenant-st", "cozystack")
		s, r, m := condition(x, "GatewayReady")
		ready, _, _ := condition(x, "Ready")
		l := listenerState(t, "tenant-st", "cozystack", https)
		h := listenerState(t, "tenant-st", "cozystack", "http")
		gen, _, _ := unstructured.NestedInt64(x.Object, "status", "observedGeneration")
		return s == "False" && r == "ListenersNotReady" && strings.Contains(m, https+" (CertificateNotReady: "+issuing+")") &&
				l["ready"] == false && l["reason"] == "CertificateNotReady" && l["message"] == issuing && h["ready"] == true && ready == "False" &&
				gen == x.GetGeneration(),
			fmt.Sprintf("GatewayReady %s %s %q; Ready %s; listeners %v %v; observedGeneration %d of %d", s, r, m, ready, h, l, gen, x.GetGeneration())
	})
	eventually(t, settle, "a Warning event on the TenantGateway naming the certificate not ready", func() (bool, string) {
		return warningOn(t, "tenant-st", "TenantGateway", "cozystack", https+" (CertificateNotReady: "+issuing+")")
	})

	// cert-manager issues it: the Secret the Certificate names, for its
	// dnsNames, and the Issuer and the Certificate Ready.
	var names []string
	for _, n := range slice(cert, "spec", "dnsNames") {
		names = append(names, n.(string))
	}
	secret := tlsSecret(t, "tenant-st", str(cert, "spec", "secretName"), names...)
	readyStatus(t, cert)
	iss, _ := get(t, gvkIssuer, "tenant-st", "cozystack-gateway")
	readyStatus(t, iss)
	eventually(t, settle, "Envoy Gateway: "+https+" Programmed with its Secret, route www Accepted", func() (bool, string) {
		gw, _ := get(t, gvkGateway, "tenant-st", "cozystack")
		rt, _ := get(t, gvkHTTPRoute, "tenant-st", "www")
		l, a := listenerConds(gw, https), routeAccepted(rt, "tenant-st", "cozystack")
		return l == "Accepted=True/Accepted Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs attached=1" && a == "True/Accepted",
			fmt.Sprintf("%s: %s; route www Accepted=%s", https, l, a)
	})
	eventually(t, settle, "GatewayReady=True Reconciled, both listeners ready, the TenantGateway Ready", func() (bool, string) {
		x := tgw(t, "tenant-st", "cozystack")
		s, r, m := condition(x, "GatewayReady")
		ready, _, _ := condition(x, "Ready")
		l := listenerState(t, "tenant-st", "cozystack", https)
		return s == "True" && r == "Reconciled" && m == "Gateway tenant-st/cozystack is programmed and every listener is ready" &&
			l["ready"] == true && ready == "True", fmt.Sprintf("GatewayReady %s %s %q; Ready %s; listener %v", s, r, m, ready, l)
	})

	// The Secret goes: Envoy Gateway refuses the listener again.
	if err := k8s.Delete(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	eventually(t, settle, "GatewayReady=False ListenersNotReady and "+https+" NotProgrammed once its Secret is gone", func() (bool, string) {
		x := tgw(t, "tenant-st", "cozystack")
		s, r, _ := condition(x, "GatewayReady")
		ready, _, _ := condition(x, "Ready")
		l := listenerState(t, "tenant-st", "cozystack", https)
		return s == "False" && r == "ListenersNotReady" && l["ready"] == false && l["reason"] == "NotProgrammed" && ready == "False",
			fmt.Sprintf("GatewayReady %s %s; Ready %s; listener %v", s, r, ready, l)
	})
}
