//go:build e2e

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// envoyController is the controllerName of Envoy Gateway, the class envoy
// (framework_test.go); route parent status it writes carries it.
const envoyController = "gateway.envoyproxy.io/gatewayclass-controller"

// envoyTenantGateway is a TenantGateway cozystack of the class envoy, in
// http01 mode.
func envoyTenantGateway(ns, apex string) string {
	return fmt.Sprintf(`
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: %s
spec:
  apex: %s
  gatewayClassName: envoy
  # The tests that use it add and remove hostnames by the dozen: no ACME
  # order budget (see Certificate orders in docs/design.md).
  acmeOrdersPerBranch: 0
`, ns, apex)
}

// gatewayListener finds one entry of status.listeners: a Gateway's, as its
// controller wrote it, or a TenantGateway's (listenerState).
func gatewayListener(gw *unstructured.Unstructured, name string) map[string]any {
	for _, l := range slice(gw, "status", "listeners") {
		if m, _ := l.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}

// condOf returns "status/reason" of a condition type in a list of
// conditions, "" when absent.
func condOf(conds any, typ string) string {
	l, _ := conds.([]any)
	for _, c := range l {
		if m, _ := c.(map[string]any); m["type"] == typ {
			return fmt.Sprintf("%v/%v", m["status"], m["reason"])
		}
	}
	return ""
}

// listenerConds is "Accepted=…, Programmed=…, ResolvedRefs=…, attached N"
// of one listener of the Gateway's status.
func listenerConds(gw *unstructured.Unstructured, name string) string {
	l := gatewayListener(gw, name)
	if l == nil {
		return "<no status>"
	}
	return fmt.Sprintf("Accepted=%s Programmed=%s ResolvedRefs=%s attached=%v",
		condOf(l["conditions"], "Accepted"), condOf(l["conditions"], "Programmed"), condOf(l["conditions"], "ResolvedRefs"), l["attachedRoutes"])
}

// routeAccepted is "status/reason" of the Accepted condition Envoy Gateway
// wrote on a route for the Gateway gwNS/gw, "" when it wrote none.
func routeAccepted(route *unstructured.Unstructured, gwNS, gw string) string {
	for _, p := range slice(route, "status", "parents") {
		m, _ := p.(map[string]any)
		ref, _ := m["parentRef"].(map[string]any)
		ns, _ := ref["namespace"].(string)
		if ns == "" {
			ns = route.GetNamespace()
		}
		if m["controllerName"] == envoyController && ref["name"] == gw && ns == gwNS {
			return condOf(m["conditions"], "Accepted")
		}
	}
	return ""
}

// tlsSecret creates a kubernetes.io/tls Secret holding a self-signed
// certificate for dnsNames, as cert-manager writes a Certificate's Secret (or
// an operator the wildcard Secret of existingSecret mode): no cert-manager
// controller runs here, so the test plays it. Deleted when the test ends.
func tlsSecret(t *testing.T, ns, name string, dnsNames ...string) *corev1.Secret {
	t.Helper()
	crt, key := selfSigned(t, dnsNames...)
	s := &corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}}
	s.SetNamespace(ns)
	s.SetName(name)
	if err := k8s.Create(t.Context(), s); err != nil {
		t.Fatalf("cannot create Secret %s/%s: %v", ns, name, err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), s) })
	return s
}

// selfSigned makes a self-signed ECDSA certificate for dnsNames, valid for a
// day, and its key, both PEM.
func selfSigned(t *testing.T, dnsNames ...string) (crt, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: dnsNames[0]},
		DNSNames:     dnsNames,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}
