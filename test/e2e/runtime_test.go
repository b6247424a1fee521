//go:build e2e

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var gvkFunctionRev = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "FunctionRevision"}

// TestFunctionUnderDeploymentRuntime: the function Crossplane calls is the
// one its Deployment runtime set up, not one the harness made. The
// FunctionRevision's endpoint is Crossplane's own (the function's headless
// Service, dns:///<Service>.crossplane-system:9443), the TLS server Secret
// it names is the one Crossplane generated for that Service's names, and
// the Deployment it created is available with one ready pod. The function
// at that pod's IP presents that Secret's certificate to a client holding
// Crossplane's client certificate, verified against Crossplane's root CA
// under the Service's name: what Crossplane's own dial checks. (How the
// harness starts the pod's process from the Deployment is up.sh's part,
// playing the kubelet, and not judged here.)
func TestFunctionUnderDeploymentRuntime(t *testing.T) {
	revs := list(t, gvkFunctionRev, "", client.MatchingLabels{"pkg.crossplane.io/package": "cozystack-function-tenant-gateway"})
	if len(revs) != 1 {
		t.Fatalf("want one revision of cozystack-function-tenant-gateway, got %d", len(revs))
	}
	rev := &revs[0]
	if s, r, m := condition(rev, "RuntimeHealthy"); s != "True" {
		t.Errorf("FunctionRevision %s RuntimeHealthy %s %s: %s", rev.GetName(), s, r, m)
	}

	// The Service Crossplane made for the revision, and the endpoint it
	// wrote for it.
	owned := func(refs []metav1.OwnerReference) bool {
		return slices.ContainsFunc(refs, func(o metav1.OwnerReference) bool { return o.Name == rev.GetName() })
	}
	svcs := &corev1.ServiceList{}
	if err := k8s.List(t.Context(), svcs, client.InNamespace("crossplane-system")); err != nil {
		t.Fatal(err)
	}
	var svc *corev1.Service
	for i := range svcs.Items {
		if owned(svcs.Items[i].OwnerReferences) {
			svc = &svcs.Items[i]
		}
	}
	if svc == nil {
		t.Fatalf("no Service is owned by FunctionRevision %s", rev.GetName())
	}
	host := svc.Name + ".crossplane-system"
	if got, want := str(rev, "status", "endpoint"), "dns:///"+host+":9443"; got != want {
		t.Errorf("FunctionRevision %s endpoint %q, want %q (its Service's, as Crossplane's Deployment runtime writes it)", rev.GetName(), got, want)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("Service %s has cluster IP %q, want a headless Service", svc.Name, svc.Spec.ClusterIP)
	}

	// The Secret Crossplane generated, for the Service's names.
	secretName := str(rev, "status", "tlsServerSecretName")
	secret := &corev1.Secret{}
	if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: "crossplane-system", Name: secretName}, secret); err != nil {
		t.Fatalf("FunctionRevision %s names TLS server Secret %q: %v", rev.GetName(), secretName, err)
	}
	if !owned(secret.OwnerReferences) {
		t.Errorf("TLS server Secret %s is not owned by FunctionRevision %s (owners %v): Crossplane did not generate it", secretName, rev.GetName(), secret.OwnerReferences)
	}

	// The Deployment and its pod.
	var dep *appsv1.Deployment
	deps := &appsv1.DeploymentList{}
	if err := k8s.List(t.Context(), deps, client.InNamespace("crossplane-system")); err != nil {
		t.Fatal(err)
	}
	for i := range deps.Items {
		if owned(deps.Items[i].OwnerReferences) {
			dep = &deps.Items[i]
		}
	}
	if dep == nil {
		t.Fatalf("no Deployment is owned by FunctionRevision %s", rev.GetName())
	}
	if dep.Status.AvailableReplicas < 1 {
		t.Errorf("Deployment %s has %d available replicas", dep.Name, dep.Status.AvailableReplicas)
	}
	pods := &corev1.PodList{}
	if err := k8s.List(t.Context(), pods, client.InNamespace("crossplane-system"), client.MatchingLabels(dep.Spec.Selector.MatchLabels)); err != nil {
		t.Fatal(err)
	}
	var ips []string
	for _, p := range pods.Items {
		ips = append(ips, p.Status.PodIP)
	}
	if d := cmp.Diff([]string{functionPodIP}, ips); d != "" {
		t.Errorf("the IPs of Deployment %s's pods (-want +got):\n%s", dep.Name, d)
	}

	// The handshake Crossplane makes.
	ca := &corev1.Secret{}
	clientSecret := &corev1.Secret{}
	for name, s := range map[string]*corev1.Secret{"crossplane-root-ca": ca, "crossplane-tls-client": clientSecret} {
		if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: "crossplane-system", Name: name}, s); err != nil {
			t.Fatalf("cannot read Crossplane's Secret %s: %v", name, err)
		}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca.Data["tls.crt"]) {
		t.Fatal("crossplane-root-ca holds no certificate")
	}
	cert, err := tls.X509KeyPair(clientSecret.Data["tls.crt"], clientSecret.Data["tls.key"])
	if err != nil {
		t.Fatalf("crossplane-tls-client: %v", err)
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", functionGRPC,
		&tls.Config{ServerName: host, RootCAs: pool, Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("mTLS handshake with the function at %s as %s, as Crossplane makes it: %v", functionGRPC, host, err)
	}
	defer conn.Close()
	leaf := conn.ConnectionState().PeerCertificates[0]
	if b, _ := pem.Decode(secret.Data["tls.crt"]); b == nil || !slices.Equal(b.Bytes, leaf.Raw) {
		t.Errorf("the function presents a certificate for %v, not the one in Secret %s", leaf.DNSNames, secretName)
	}
}
