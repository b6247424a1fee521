//go:build e2e

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/tgwspec"
)

// The real issuer tls.sh brings up: cert-manager's ACME controllers watch
// only tlsNamespace; BIND is authoritative for tlsZone and takes updates
// signed with the TSIG key tsigKeyName; Pebble serves its directory at
// pebbleDirectory.
const (
	tlsNamespace    = "tenant-tls"
	tlsZone         = "tls.example"
	tsigKeyName     = "e2e-tsig"
	tsigSecret      = "tsig"
	pebbleDirectory = "https://127.0.0.1:14000/dir"
	dnsServer       = "127.0.0.1:8053"
	// issuance bounds one ACME issuance: cert-manager's account and
	// order, the TXT records through BIND, its self-check (every 2 s),
	// Pebble's validation and the Secret, on a loaded machine. cert-manager
	// waits a fixed 60 s after each DNS-01 self-check passes, and presents
	// the challenges of one name one at a time, so a certificate for a
	// name and its wildcard takes at least two minutes.
	issuance = 5 * time.Minute
)

// dns01TenantGateway is a TenantGateway in dns01 mode on Envoy Gateway's
// class, issued by Pebble through the rfc2136 provider.
func dns01TenantGateway(t *testing.T) string {
	t.Helper()
	ca := strings.TrimSuffix(string(tlsRun(t, "pki", "pebble-ca.crt")), "\n")
	return fmt.Sprintf(`
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: %s
spec:
  apex: %s
  gatewayClassName: envoy
  certMode: dns01
  issuerName: pebble
  acme:
    server: %s
    caBundle: |
      %s
  dns01:
    provider: rfc2136
    rfc2136:
      nameserver: %s
      tsigKeyName: %s
      tsigSecretSecretRef: {name: %s, key: %s}
`, tlsNamespace, tlsZone, pebbleDirectory, strings.ReplaceAll(ca, "\n", "\n      "), dnsServer, tsigKeyName, tsigSecret, tgwspec.PlatformRFC2136TSIGSecretKey)
}

// TestDNS01Issuance: a TenantGateway in dns01 mode with the rfc2136
// provider gets a certificate issued for real: cert-manager's controllers
// write the TXT records into BIND through RFC 2136 signed with TSIG, Pebble
// validates them through BIND, and the wildcard Certificate turns Ready.
// Its Secret verifies against Pebble's root and covers the apex, *.apex and
// the child apex with its wildcard; Envoy Gateway programs the listeners
// with it and the TenantGateway's listener status and GatewayReady follow.
// No status is written by the test. A new child tenant then re-issues the
// certificate under the same Secret name with the child's names.
func TestDNS01Issuance(t *testing.T) {
	t.Parallel()
	alice, bob := "alice."+tlsZone, "bob."+tlsZone
	tenantNamespaces(t, tlsNamespace, tlsZone, map[string]string{"tenant-tls-alice": alice})
	secret := &corev1.Secret{Type: corev1.SecretTypeOpaque, StringData: map[string]string{
		tgwspec.PlatformRFC2136TSIGSecretKey: strings.TrimSpace(string(tlsRun(t, "run", "tls", "tsig.secret"))),
	}}
	secret.SetName(tsigSecret)
	secret.SetNamespace(tlsNamespace)
	if err := k8s.Create(t.Context(), secret); err != nil {
		t.Fatalf("cannot create the TSIG Secret: %v", err)
	}
	apply(t, httpRoute("tenant-tls-alice", "www", tlsNamespace, "cozystack", "www."+alice))
	start := time.Now()
	apply(t, dns01TenantGateway(t))

	certName := gateway.WildcardCertificateName("cozystack")
	rev := trustedOn(t, certName, tlsZone, "*."+tlsZone, alice, "*."+alice)
	took := time.Since(start)
	t.Logf("new TenantGateway to a trusted certificate on programmed listeners: %s (revision %d)", took.Round(100*time.Millisecond), rev)

	// A new child tenant: the same Secret name, re-issued with its names.
	namespace(t, "tenant-tls-bob", map[string]string{"namespace.cozystack.io/host": bob, "namespace.cozystack.io/gateway": tlsNamespace})
	start = time.Now()
	apply(t, httpRoute("tenant-tls-bob", "www", tlsNamespace, "cozystack", "www."+bob))
	if next := trustedOn(t, certName, tlsZone, "*."+tlsZone, alice, "*."+alice, bob, "*."+bob); next <= rev {
		t.Errorf("Certificate %s: want a revision after %d for the new child, got %d", certName, rev, next)
	}
	t.Logf("new child tenant to a trusted re-issued certificate on programmed listeners: %s", time.Since(start).Round(100*time.Millisecond))

	// The TenantGateway goes: its Certificate, and with it (cert-manager
	// making each Certificate its Secret's owner) the Secret. The ACME
	// account key stays (see What cert-manager leaves in docs/design.md).
	removeTenantGateway(t, certName)

	// E2E_TLS_SAMPLES > 1 measures the latency of a new TenantGateway
	// that many times (README, Automatic TLS): the first sample above, the
	// others re-created in the same namespace (the ACME account exists).
	samples, _ := strconv.Atoi(os.Getenv("E2E_TLS_SAMPLES"))
	if samples < 2 {
		return
	}
	latency := map[string]time.Duration{"s00": took}
	for i := 1; i < samples; i++ {
		start := time.Now()
		if err := applyDocs(t.Context(), k8s, dns01TenantGateway(t)); err != nil {
			t.Fatal(err)
		}
		trustedOn(t, certName, tlsZone, "*."+tlsZone, alice, "*."+alice, bob, "*."+bob)
		latency[fmt.Sprintf("s%02d", i)] = time.Since(start)
		t.Logf("sample %d: %s", i, time.Since(start).Round(100*time.Millisecond))
		removeTenantGateway(t, certName)
	}
	t.Logf("%d new TenantGateways (dns01, 6 names) to a trusted certificate on programmed listeners: %s", samples, quantiles(latency))
}

// removeTenantGateway deletes the TenantGateway of tlsNamespace and waits
// until its Certificate certName and that Certificate's Secret are gone.
func removeTenantGateway(t *testing.T, certName string) {
	t.Helper()
	remove(t, dns01TenantGateway(t))
	eventually(t, settle, "Certificate "+certName+" and its Secret gone with the TenantGateway", func() (bool, string) {
		_, cert := get(t, gvkCertificate, tlsNamespace, certName)
		s := &corev1.Secret{}
		err := k8s.Get(t.Context(), client.ObjectKey{Namespace: tlsNamespace, Name: certName}, s)
		_, x := get(t, gvkTenantGateway, tlsNamespace, "cozystack")
		return !cert && !x && kerrors.IsNotFound(err), fmt.Sprintf("Certificate present %v; TenantGateway present %v; Secret: %v", cert, x, err)
	})
}

// trustedOn waits until the Certificate name in tlsNamespace is Ready for
// exactly names, its Secret (of the same name) holds a key pair that
// verifies against Pebble's root for every name, and the TenantGateway is
// GatewayReady with every listener ready; it returns the Certificate's
// revision.
func trustedOn(t *testing.T, name string, names ...string) int64 {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(tlsRun(t, "run", "tls", "pebble-root.pem")) {
		t.Fatal("Pebble's root (run/tls/pebble-root.pem) holds no certificate")
	}
	var revision int64
	eventually(t, issuance, fmt.Sprintf("Certificate %s Ready for %v, issued by cert-manager", name, names), func() (bool, string) {
		c, found := get(t, gvkCertificate, tlsNamespace, name)
		if !found {
			return false, "no Certificate; TenantGateway: " + show(tgw(t, tlsNamespace, "cozystack"))
		}
		s, _, _ := condition(c, "Ready")
		revision, _, _ = unstructured.NestedInt64(c.Object, "status", "revision")
		var got []string
		for _, n := range slice(c, "spec", "dnsNames") {
			got = append(got, n.(string))
		}
		return s == "True" && slices.Equal(got, names) && c.GetGeneration() == observed(c), show(c) + "\n" + challenges(t, tlsNamespace)
	})
	eventually(t, settle, fmt.Sprintf("Secret %s verifying against Pebble's root for %v", name, names), func() (bool, string) {
		s := &corev1.Secret{}
		if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: tlsNamespace, Name: name}, s); err != nil {
			return false, err.Error()
		}
		if err := verifies(s, roots, names); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	eventually(t, settle, "GatewayReady=True and every listener ready", func() (bool, string) {
		x := tgw(t, tlsNamespace, "cozystack")
		s, r, m := condition(x, "GatewayReady")
		var notReady []string
		ls := slice(x, "status", "listeners")
		for _, l := range ls {
			if m, _ := l.(map[string]any); m["ready"] != true {
				notReady = append(notReady, fmt.Sprint(m))
			}
		}
		return s == "True" && len(ls) == 2+len(names)/2 && len(notReady) == 0,
			fmt.Sprintf("GatewayReady %s %s %q; %d listeners, not ready: %v", s, r, m, len(ls), notReady)
	})
	return revision
}

// verifies checks that a kubernetes.io/tls Secret holds a key pair whose
// leaf chains to roots through the intermediates beside it and is valid
// for every name (a wildcard is checked with a name under it).
func verifies(s *corev1.Secret, roots *x509.CertPool, names []string) error {
	pair, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return fmt.Errorf("tls.crt and tls.key are no key pair: %w", err)
	}
	inter := x509.NewCertPool()
	rest := s.Data[corev1.TLSCertKey]
	for i := 0; ; i++ {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if c, err := x509.ParseCertificate(b.Bytes); err == nil && i > 0 {
			inter.AddCert(c)
		}
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return err
	}
	for _, n := range names {
		host := strings.Replace(n, "*", "any", 1)
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: host}); err != nil {
			return fmt.Errorf("the certificate (SANs %v) does not verify for %s: %w", leaf.DNSNames, host, err)
		}
	}
	return nil
}

// challenges says where each ACME challenge in ns stands, for failure
// messages: cert-manager's reason names what went wrong (a TSIG key BIND
// refuses, a record Pebble cannot see, a self-check that cannot reach the
// solver).
func challenges(t *testing.T, ns string) string {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion("acme.cert-manager.io/v1")
	l.SetKind("ChallengeList")
	if err := k8s.List(t.Context(), l, client.InNamespace(ns)); err != nil {
		return "challenges: " + err.Error()
	}
	var out []string
	for _, c := range l.Items {
		out = append(out, fmt.Sprintf("challenge %s %s: %s %s", c.GetName(), str(&c, "spec", "dnsName"), str(&c, "status", "state"), str(&c, "status", "reason")))
	}
	return strings.Join(out, "\n")
}
