//go:build e2e

// Package e2e runs the product on real parts: a kube-apiserver with the
// Gateway API and cert-manager CRDs, Crossplane core with our Configuration
// and Function installed from a registry by `crossplane xpkg install`, and
// provider-kubernetes. test/e2e/hack/up.sh brings them up; `make e2e` runs
// these tests against them and tears everything down.
//
// Envoy Gateway's controller runs too (test/e2e/hack/envoy-gateway.sh), and
// the TenantGateways of the tests that judge Gateway status name its class,
// envoy: Gateway, listener and route status are its own. No cert-manager,
// kubelet or proxy runs: a test that needs a certificate's Secret creates it
// (playing cert-manager) and the harness marks Envoy Gateway's proxy pods
// ready as a kubelet would (kubelet_test.go). Where a test needs what another
// implementation would write, the harness writes it through the status
// subresource and says so.
package e2e

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

const (
	// fieldOwner is the manager of what the tests apply, as a user would.
	fieldOwner = "e2e"
	// controllerOwner writes status the harness plays: cert-manager's, and
	// that of implementations other than Envoy Gateway.
	controllerOwner = "e2e-gateway-controller"
	// oneTTL bounds how long a change the function picks up from required
	// resources may take: the function runs with --ttl=10s (up.sh), plus
	// Crossplane's queueing and provider-kubernetes' apply.
	oneTTL = 45 * time.Second
	// settle bounds what Crossplane does on a watch event (composed
	// resources, XR status).
	settle = 60 * time.Second
)

var (
	k8s     client.Client
	restCfg *rest.Config
)

// GVKs of what the tests read as unstructured objects.
var (
	gvkTenantGateway = schema.GroupVersionKind{Group: "gateway.cozystack.io", Version: "v1alpha1", Kind: "TenantGateway"}
	gvkTenant        = schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "Tenant"}
	gvkGateway       = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"}
	gvkHTTPRoute     = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}
	gvkTLSRoute      = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "TLSRoute"}
	gvkIssuer        = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Issuer"}
	gvkCertificate   = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}
	gvkNSObject      = schema.GroupVersionKind{Group: "kubernetes.m.crossplane.io", Version: "v1alpha1", Kind: "Object"}
	gvkNamespace     = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	gvkResourceQuota = schema.GroupVersionKind{Version: "v1", Kind: "ResourceQuota"}
)

func TestMain(m *testing.M) {
	if err := setup(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

func setup() error {
	kc := os.Getenv("KUBECONFIG")
	if kc == "" {
		return errors.New("KUBECONFIG is not set: run the tests with `make e2e`, which brings the control plane up")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		return fmt.Errorf("cannot load %s: %w", kc, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	// Every request is bounded here; the tests pass t.Context(), which ends
	// with the test.
	cfg.Timeout = 30 * time.Second
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return fmt.Errorf("cannot create a client: %w", err)
	}
	k8s, restCfg = c, cfg
	// What every platform of ours has: the GatewayClass the TenantGateways
	// default to, and the admission policies (examples/cluster/admission-policies.yaml), so every object
	// the function composes in these tests also passes them; before them,
	// the trusted callers they read (without it they deny everything).
	trusted, err := trustedCallers()
	if err != nil {
		return err
	}
	if err := applyDocs(context.Background(), k8s, trusted); err != nil {
		return fmt.Errorf("cannot apply the trusted callers: %w", err)
	}
	if err := applyDocs(context.Background(), k8s, readFile("examples", "cluster", "admission-policies.yaml")); err != nil {
		return fmt.Errorf("cannot apply the admission policies: %w", err)
	}
	// The platform settings, as install step 4 applies them with the
	// suite's order quotas, once for every test: a test that applied them
	// with apply() would delete them when it ended, under the Tenants of
	// every test still running. A test that needs other settings is not
	// parallel and puts these back.
	if err := applyDocs(context.Background(), k8s, platformSettings()); err != nil {
		return fmt.Errorf("cannot apply the platform settings: %w", err)
	}
	if err := policiesActive(); err != nil {
		return err
	}
	if err := applyDocs(context.Background(), k8s, classes); err != nil {
		return fmt.Errorf("cannot apply the GatewayClasses: %w", err)
	}
	go playKubelet(context.Background(), k8s, os.Stderr)
	// cert-manager's HTTP-01 solver Pods and the data plane in front of
	// them, for the http01 tests (solver_test.go).
	go playSolvers(context.Background(), k8s, os.Stderr)
	go playGateway(context.Background(), k8s, os.Stderr)
	return envoyGatewayUp()
}

// envoyGatewayUp waits until Envoy Gateway, which up.sh starts without
// waiting for it, has accepted the GatewayClass envoy.
func envoyGatewayUp() error {
	gc := &unstructured.Unstructured{}
	gc.SetGroupVersionKind(gvkGatewayClass)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := k8s.Get(context.Background(), client.ObjectKey{Name: "envoy"}, gc)
		if s, _, _ := condition(gc, "Accepted"); err == nil && s == "True" {
			return nil
		}
		switch {
		case time.Now().Before(deadline):
		case err != nil:
			return fmt.Errorf("cannot read the GatewayClass envoy after 2m: %w", err)
		default:
			return fmt.Errorf("envoy-gateway has not accepted the GatewayClass envoy after 2m (see its log, envoy-gateway.log): %s", show(gc))
		}
		time.Sleep(time.Second)
	}
}

// classes are the GatewayClasses a platform has: cilium, the TenantGateways'
// default, which no controller serves here, and envoy, served by Envoy
// Gateway. Its EnvoyProxy gives the proxy a ClusterIP Service, whose address
// the API server allocates, where a LoadBalancer would wait for a cloud
// controller to give it one: Envoy Gateway programs a Gateway only once it
// has an address.
const classes = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: cilium
spec:
  controllerName: io.cilium/gateway-controller
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata:
  name: loopback
  namespace: envoy-gateway-system
spec:
  provider:
    type: Kubernetes
    kubernetes:
      envoyService: {type: ClusterIP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: envoy
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
  parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: loopback, namespace: envoy-gateway-system}
`

// readFile reads a file of the repository, two folders up from here.
func readFile(elem ...string) string {
	b, err := os.ReadFile(filepath.Join(append([]string{"..", ".."}, elem...)...))
	if err != nil {
		panic(fmt.Sprintf("cannot read %v: %v", elem, err))
	}
	return string(b)
}

// platformSettings are examples/cluster/platform.yaml with the suite's ACME
// order quotas (testdata/platform-orders.yaml) as gateway.certificateOrders:
// what users copy stays as it is.
func platformSettings() string {
	const anchor = "\n  gateway:\n"
	p := readFile("examples", "cluster", "platform.yaml")
	if !strings.Contains(p, anchor) {
		panic("examples/cluster/platform.yaml has no data.gateway")
	}
	orders := "    certificateOrders:\n"
	for _, l := range strings.Split(strings.TrimSpace(readFile("test", "e2e", "testdata", "platform-orders.yaml")), "\n") {
		if !strings.HasPrefix(l, "#") {
			orders += "      " + l + "\n"
		}
	}
	return strings.Replace(p, anchor, anchor+orders, 1)
}

// decode splits a multi-document YAML into objects.
func decode(docs string) ([]*unstructured.Unstructured, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(docs), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("cannot decode YAML: %w", err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// applyDocs server-side applies every document, as `kubectl apply
// --server-side` would.
func applyDocs(c context.Context, cl client.Client, docs string) error {
	objs, err := decode(docs)
	if err != nil {
		return err
	}
	for _, u := range objs {
		if err := cl.Apply(c, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("cannot apply %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	return nil
}

// apply applies the documents and deletes them when the test ends.
func apply(t *testing.T, docs string) {
	t.Helper()
	if err := applyDocs(t.Context(), k8s, docs); err != nil {
		t.Fatal(err)
	}
	objs, _ := decode(docs)
	t.Cleanup(func() {
		for i := len(objs) - 1; i >= 0; i-- {
			_ = k8s.Delete(context.Background(), objs[i])
		}
	})
}

// remove deletes what the documents name and fails on anything but success
// or absence.
func remove(t *testing.T, docs string) {
	t.Helper()
	objs, err := decode(docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		if err := k8s.Delete(t.Context(), u); err != nil && !kerrors.IsNotFound(err) {
			t.Fatalf("cannot delete %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
}

// namespace creates a namespace with labels and deletes it when the test
// ends.
func namespace(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{}
	ns.SetName(name)
	ns.SetLabels(labels)
	if err := k8s.Create(t.Context(), ns); err != nil {
		t.Fatalf("cannot create namespace %s: %v", name, err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), ns) })
}

// get reads an object; found is false when it does not exist.
func get(t *testing.T, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, bool) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, u)
	if kerrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("cannot get %s %s/%s: %v", gvk.Kind, ns, name, err)
	}
	return u, true
}

// list lists objects of a kind in a namespace ("" for all).
func list(t *testing.T, gvk schema.GroupVersionKind, ns string, opts ...client.ListOption) []unstructured.Unstructured {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := k8s.List(t.Context(), l, append(opts, client.InNamespace(ns))...); err != nil {
		t.Fatalf("cannot list %s in %q: %v", gvk.Kind, ns, err)
	}
	return l.Items
}

// eventually polls check until it reports done or the timeout passes, then
// fails with what was expected and what check last saw.
func eventually(t *testing.T, timeout time.Duration, expected string, check func() (done bool, saw string)) {
	t.Helper()
	eventuallyEvery(t, timeout, time.Second, expected, check)
}

// eventuallyEvery is eventually polling every interval: shorter where the
// time to done is what a test measures.
func eventuallyEvery(t *testing.T, timeout, interval time.Duration, expected string, check func() (done bool, saw string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	start := time.Now()
	var saw string
	for {
		var done bool
		done, saw = check()
		if done {
			t.Logf("%s (after %s)", expected, time.Since(start).Round(min(interval, time.Second)))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("expected %s within %s; last saw: %s", expected, timeout, saw)
		}
		time.Sleep(interval)
	}
}

// watchClient is a client for watches that last a whole test: without the
// request timeout of every other request, which would end them after 30 s.
func watchClient(t *testing.T) client.WithWatch {
	t.Helper()
	cfg := rest.CopyConfig(restCfg)
	cfg.Timeout = 0
	wc, err := client.NewWithWatch(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return wc
}

// str reads a string field of an unstructured object.
func str(u *unstructured.Unstructured, fields ...string) string {
	if u == nil {
		return ""
	}
	s, _, _ := unstructured.NestedString(u.Object, fields...)
	return s
}

// slice reads a list field of an unstructured object.
func slice(u *unstructured.Unstructured, fields ...string) []any {
	if u == nil {
		return nil
	}
	s, _, _ := unstructured.NestedSlice(u.Object, fields...)
	return s
}

// condition returns status, reason and message of a condition type.
func condition(u *unstructured.Unstructured, typ string) (status, reason, message string) {
	for _, c := range slice(u, "status", "conditions") {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg
		}
	}
	return "", "", ""
}

// listeners lists the names and hostnames of a Gateway's listeners as
// "name=hostname" (hostname empty for the http listener).
func listeners(gw *unstructured.Unstructured) []string {
	var out []string
	for _, l := range slice(gw, "spec", "listeners") {
		m, _ := l.(map[string]any)
		h, _ := m["hostname"].(string)
		out = append(out, fmt.Sprintf("%v=%s", m["name"], h))
	}
	return out
}

// show prints an object's kind, name, spec and status for failure messages.
func show(u *unstructured.Unstructured) string {
	if u == nil {
		return "<absent>"
	}
	return fmt.Sprintf("%s %s/%s spec=%v status=%v", u.GetKind(), u.GetNamespace(), u.GetName(), u.Object["spec"], u.Object["status"])
}

// statusApply writes an object's status subresource by server-side apply, as
// the controller that owns that status would.
func statusApply(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	if err := k8s.Status().Apply(t.Context(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(controllerOwner), client.ForceOwnership); err != nil {
		t.Fatalf("cannot write the status of %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
}

// policiesActive waits until the API server enforces the policies that judge
// what the function composes and what tenants attach (it loads new policies
// asynchronously): a Gateway, an HTTPRoute, a TLSRoute and a GRPCRoute with a
// hostname in a tenant namespace without a host label must all be denied.
func policiesActive() error {
	c := context.Background()
	probe := &corev1.Namespace{}
	probe.SetName("tenant-e2e-policy-probe")
	if err := k8s.Create(c, probe); err != nil && !kerrors.IsAlreadyExists(err) {
		return fmt.Errorf("cannot create the policy probe namespace: %w", err)
	}
	defer func() { _ = k8s.Delete(c, probe) }()
	objs, err := decode(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: probe, namespace: tenant-e2e-policy-probe}
spec:
  gatewayClassName: cilium
  listeners: [{name: http, port: 80, protocol: HTTP, hostname: probe.example.org}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: probe, namespace: tenant-e2e-policy-probe}
spec: {hostnames: [probe.example.org]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: probe, namespace: tenant-e2e-policy-probe}
spec: {hostnames: [probe.example.org], rules: [{backendRefs: [{name: probe, port: 443}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: probe, namespace: tenant-e2e-policy-probe}
spec: {hostnames: [probe.example.org]}
`)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, u := range objs {
		for {
			// Denied by the policy's own validation, not by a binding whose
			// parameter the API server has not seen yet.
			err := k8s.Apply(c, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), client.FieldOwner(fieldOwner), client.DryRunAll)
			if err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy") && strings.Contains(err.Error(), "must equal") {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the admission policies are not enforced after 60s: a %s with a hostname in a tenant namespace without a host label was not denied (%w)", u.GetKind(), err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	return nil
}

// tenantNamespaces creates a TenantGateway's namespace and its children, each
// labelled as the tenant layer labels them: host, and gateway = tgwNS.
func tenantNamespaces(t *testing.T, tgwNS, apex string, children map[string]string) {
	t.Helper()
	namespace(t, tgwNS, map[string]string{"namespace.cozystack.io/host": apex, "namespace.cozystack.io/gateway": tgwNS})
	for ns, host := range children {
		namespace(t, ns, map[string]string{"namespace.cozystack.io/host": host, "namespace.cozystack.io/gateway": tgwNS})
	}
}

func httpRoute(ns, name, gwNS, gw string, hostnames ...string) string {
	return fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: %s
  namespace: %s
spec:
  parentRefs:
  - name: %s
    namespace: %s
  hostnames: [%s]
  rules:
  - backendRefs:
    - name: app
      port: 80
`, name, ns, gw, gwNS, strings.Join(hostnames, ", "))
}

// waitGateway waits until the TenantGateway's Gateway has listeners
// satisfying ok, and returns it.
func waitGateway(t *testing.T, ns, name, expected string, ok func(ls []string, gw *unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	var gw *unstructured.Unstructured
	eventually(t, oneTTL+settle, expected, func() (bool, string) {
		g, found := get(t, gvkGateway, ns, name)
		if !found {
			return false, fmt.Sprintf("no Gateway %s/%s; TenantGateway: %s", ns, name, show(tgw(t, ns, name)))
		}
		gw = g
		return ok(listeners(g), g), fmt.Sprintf("listeners %v", listeners(g))
	})
	return gw
}

func tgw(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, _ := get(t, gvkTenantGateway, ns, name)
	return u
}

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

func typedListeners(t *testing.T, gw *unstructured.Unstructured) []gwapiv1.Listener {
	t.Helper()
	b, err := json.Marshal(gw.Object)
	if err != nil {
		t.Fatal(err)
	}
	var g gwapiv1.Gateway
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("cannot read Gateway %s: %v", gw.GetName(), err)
	}
	return g.Spec.Listeners
}

// events are the messages of the events on an object, one a line.
func events(t *testing.T, ns, name string) string {
	t.Helper()
	l := &corev1.EventList{}
	if err := k8s.List(t.Context(), l, client.InNamespace(ns)); err != nil {
		t.Fatalf("cannot list events in %s: %v", ns, err)
	}
	var out []string
	for _, e := range l.Items {
		if e.InvolvedObject.Name == name {
			out = append(out, e.Message)
		}
	}
	return strings.Join(out, "\n")
}

// functionTTL is the --ttl the harness runs the function with.
func functionTTL(t *testing.T) time.Duration {
	s := os.Getenv("FUNCTION_TTL")
	if s == "" {
		s = "10s" // up.sh's default
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("FUNCTION_TTL %q: %v", s, err)
	}
	return d
}

// crossplaneDefaults is whether the harness runs Crossplane at its own
// defaults (up.sh's CROSSPLANE_SETTINGS=default, make e2e's third pass)
// rather than with its short poll and raised circuit breaker.
func crossplaneDefaults() bool { return os.Getenv("CROSSPLANE_SETTINGS") == "default" }

// crossplaneSettings names the settings for the logs of measurements.
func crossplaneSettings() string {
	if crossplaneDefaults() {
		return "Crossplane at its defaults"
	}
	return "Crossplane at the harness' settings (poll 15s, circuit breaker 2000/20)"
}

// composedVersions is the resourceVersion of the TenantGateway cozystack in
// ns and of everything it composes there.
func composedVersions(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	xr, _ := get(t, gvkTenantGateway, ns, "cozystack")
	out["TenantGateway/cozystack"] = xr.GetResourceVersion()
	for _, gvk := range []schema.GroupVersionKind{gvkGateway, gvkCertificate, gvkIssuer, gvkHTTPRoute, gvkNSObject} {
		for _, o := range list(t, gvk, ns) {
			out[gvk.Kind+"/"+o.GetName()] = o.GetResourceVersion()
		}
	}
	return out
}

func diffVersions(before, after map[string]string) string {
	var d []string
	for k, v := range after {
		if before[k] != v {
			d = append(d, fmt.Sprintf("%s (resourceVersion %s -> %s)", k, before[k], v))
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			d = append(d, k+" (deleted)")
		}
	}
	slices.Sort(d)
	return strings.Join(d, ", ")
}

// listenerState finds one entry of a TenantGateway's status.listeners.
func listenerState(t *testing.T, ns, name, listener string) map[string]any {
	t.Helper()
	return gatewayListener(tgw(t, ns, name), listener)
}

// readyStatus marks a cert-manager object Ready, as cert-manager would.
func readyStatus(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	conditionStatus(t, obj, "Ready", "True", "Ready", "ready")
}

// conditionStatus writes one condition of an object's status, as its
// controller would.
func conditionStatus(t *testing.T, obj *unstructured.Unstructured, typ, status, reason, message string) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": obj.GetAPIVersion(), "kind": obj.GetKind(),
		"metadata": map[string]any{"name": obj.GetName(), "namespace": obj.GetNamespace()},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": typ, "status": status, "reason": reason, "message": message, "lastTransitionTime": "2026-01-01T00:00:00Z",
		}}},
	}}
	statusApply(t, u)
}

// warningOn looks for a Warning event on an object whose message contains
// want; it says what it saw otherwise.
func warningOn(t *testing.T, ns, kind, name, want string) (bool, string) {
	t.Helper()
	l := &corev1.EventList{}
	if err := k8s.List(t.Context(), l, client.InNamespace(ns)); err != nil {
		return false, err.Error()
	}
	var saw []string
	for _, e := range l.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, want) {
			return true, ""
		}
		saw = append(saw, e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name+" "+e.Type+": "+e.Message)
	}
	return false, strings.Join(saw, "\n")
}

// quantiles is "p50 …, max … (sorted: …)" of durations, to 100 ms.
func quantiles(m map[string]time.Duration) string {
	ds := make([]time.Duration, 0, len(m))
	for _, d := range m {
		ds = append(ds, d.Round(100*time.Millisecond))
	}
	slices.Sort(ds)
	return fmt.Sprintf("p50 %s, max %s (sorted: %v)", ds[len(ds)/2], ds[len(ds)-1], ds)
}

// listenerFor is the name of the Gateway's listener for hostname, "" when
// it has none.
func listenerFor(gw *unstructured.Unstructured, hostname string) string {
	for _, l := range slice(gw, "spec", "listeners") {
		if m, _ := l.(map[string]any); m["hostname"] == hostname {
			name, _ := m["name"].(string)
			return name
		}
	}
	return ""
}

// annotate sets the confirmation on an object to value, or removes it when
// value is empty; the test's end removes it in any case.
func annotate(t *testing.T, gvk schema.GroupVersionKind, name, value string) {
	t.Helper()
	patch := func(c context.Context, v string) error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetName(name)
		body := `{"metadata":{"annotations":{"` + confirmDeletion + `":null}}}`
		if v != "" {
			body = `{"metadata":{"annotations":{"` + confirmDeletion + `":"` + v + `"}}}`
		}
		return k8s.Patch(c, u, client.RawPatch(types.MergePatchType, []byte(body)))
	}
	if err := patch(t.Context(), value); err != nil {
		t.Fatalf("cannot annotate %s %s: %v", gvk.Kind, name, err)
	}
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = patch(c, "")
	})
}

// marks reports a namespace's gateway label and attached-by annotation.
func marks(t *testing.T, ns string) (label, annotation string, labels map[string]string) {
	t.Helper()
	u, found := get(t, gvkNamespace, "", ns)
	if !found {
		t.Fatalf("namespace %s is gone", ns)
	}
	return u.GetLabels()[labelGateway], u.GetAnnotations()[annotAttachedBy], u.GetLabels()
}

// printed is what `kubectl get` prints for one object: its printer columns
// by name, as the API server renders them (the Table form of a GET).
func printed(t *testing.T, path string) (map[string]string, error) {
	t.Helper()
	hc, err := rest.HTTPClientFor(restCfg)
	if err != nil {
		return nil, fmt.Errorf("cannot make an HTTP client: %w", err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, restCfg.Host+path, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot make the request: %w", err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	rsp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot GET %s: %w", path, err)
	}
	defer rsp.Body.Close()
	var tbl metav1.Table
	if err := json.NewDecoder(rsp.Body).Decode(&tbl); err != nil {
		return nil, fmt.Errorf("cannot decode the table of %s: %w", path, err)
	}
	if len(tbl.Rows) != 1 {
		return nil, fmt.Errorf("%s: %d rows", path, len(tbl.Rows))
	}
	out := map[string]string{}
	for i, c := range tbl.ColumnDefinitions {
		if i < len(tbl.Rows[0].Cells) {
			out[c.Name] = fmt.Sprint(tbl.Rows[0].Cells[i])
		}
	}
	return out, nil
}

// as is a client that acts as the user in the groups, impersonated by the
// admin.
func as(t *testing.T, user string, groups ...string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(restCfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	c, err := client.New(cfg, client.Options{Scheme: k8s.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// observed is a cert-manager object's status.observedGeneration on its
// Ready condition.
func observed(u *unstructured.Unstructured) int64 {
	for _, c := range slice(u, "status", "conditions") {
		if m, _ := c.(map[string]any); m["type"] == "Ready" {
			g, _ := m["observedGeneration"].(int64)
			return g
		}
	}
	return 0
}

// tlsRun reads a file tls.sh wrote under the run folder.
func tlsRun(t *testing.T, elem ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{os.Getenv("E2E_DIR")}, elem...)...))
	if err != nil {
		t.Fatalf("cannot read what tls.sh left (is the issuer up? see tls.sh): %v", err)
	}
	return b
}

// The processes of the control plane, as up.sh started them: each has a PID
// file and a start script (E2E_DIR/run/<name>.pid and <name>.sh, written by
// up.sh's bg and envoy-gateway.sh). The fault tests stop and start them.

// runPath is a file of the harness' run folder.
func runPath(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("E2E_DIR")
	if dir == "" {
		t.Fatal("E2E_DIR is not set: run through make e2e")
	}
	return filepath.Join(dir, "run", name)
}

// procPID is the recorded PID of a process of the control plane.
func procPID(t *testing.T, name string) int {
	t.Helper()
	b, err := os.ReadFile(runPath(t, name+".pid"))
	if err != nil {
		t.Fatalf("cannot read the PID of %s: %v", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the PID file of %s holds %q: %v", name, b, err)
	}
	return pid
}

// stopProc signals a process of the control plane and waits until it has
// exited: SIGKILL is a crash, SIGTERM a restart as a kubelet does it (then
// SIGKILL after 60 s, as a pod's grace period ends).
func stopProc(t *testing.T, name string, sig syscall.Signal) {
	t.Helper()
	stopProcWithin(t, name, sig, 60*time.Second)
}

// stopProcWithin is stopProc with a grace period of its own.
func stopProcWithin(t *testing.T, name string, sig syscall.Signal, grace time.Duration) {
	t.Helper()
	pid := procPID(t, name)
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("cannot signal %s (PID %d): %v", name, pid, err)
	}
	deadline := time.Now().Add(grace)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			deadline = time.Now().Add(10 * time.Second)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startProc starts a process of the control plane again with the script up.sh
// recorded, in a session of its own as up.sh does, its output appended to its
// log, and records its new PID for down.sh.
func startProc(t *testing.T, name string) {
	t.Helper()
	logPath := filepath.Join(os.Getenv("E2E_DIR"), "logs", name+".log")
	log, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatalf("cannot open %s: %v", logPath, err)
	}
	defer log.Close()
	fmt.Fprintf(log, "\n----- started again by %s at %s\n", t.Name(), time.Now().UTC().Format(time.RFC3339))
	cmd := exec.Command("bash", runPath(t, name+".sh"))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start %s again: %v", name, err)
	}
	// Reap it when it exits (a later stop), so that a signal 0 no longer
	// finds it.
	go func() { _ = cmd.Wait() }()
	if err := os.WriteFile(runPath(t, name+".pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatalf("cannot record the PID of %s: %v", name, err)
	}
}

// waitHTTP waits until url answers 200 (a health probe).
func waitHTTP(t *testing.T, url string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, url+" healthy", func() (bool, string) {
		c, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(c, http.MethodGet, url, nil)
		rsp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer rsp.Body.Close()
		return rsp.StatusCode == http.StatusOK, rsp.Status
	})
}

// waitTCP waits until something listens at addr.
func waitTCP(t *testing.T, addr string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, addr+" listening", func() (bool, string) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false, err.Error()
		}
		_ = c.Close()
		return true, ""
	})
}

// waitAPIServer waits until the API server answers /readyz.
func waitAPIServer(t *testing.T, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "kube-apiserver ready", func() (bool, string) {
		ns := &corev1.Namespace{}
		err := k8s.Get(t.Context(), client.ObjectKey{Name: "default"}, ns)
		return err == nil, fmt.Sprint(err)
	})
}

// replicaCalls is the sum of function_tenant_gateway_calls_total, every
// kind of XR and outcome, at a metrics endpoint.
func replicaCalls(t *testing.T, url string) float64 {
	t.Helper()
	return scrapeSum(t, url, "function_tenant_gateway_calls_total")
}

// xrCalls is function_tenant_gateway_xr_calls_total of one XR (kind,
// namespace, "" for an XTenant, and name), every outcome, at a function's
// metrics endpoint: the function's own count of its calls of that XR,
// whatever its log level.
func xrCalls(t *testing.T, url, kind, ns, name string) float64 {
	t.Helper()
	return scrapeSum(t, url, "function_tenant_gateway_xr_calls_total", `xr_kind="`+kind+`"`, `xr_namespace="`+ns+`"`, `xr_name="`+name+`"`)
}

// crossplaneMetrics is Crossplane's metrics endpoint: up.sh starts it with
// --metrics-port=18080 on the host's network.
const crossplaneMetrics = "http://127.0.0.1:18080/metrics"

// scrapeSum is the sum of the series of a metric at a metrics endpoint
// whose labels include every one given (as name="value").
func scrapeSum(t *testing.T, url, metric string, labels ...string) float64 {
	t.Helper()
	return scrapeBy(t, url, metric, labels)[""]
}

// scrapeBy is scrapeSeries, failing the test when the endpoint cannot be
// read.
func scrapeBy(t *testing.T, url, metric string, labels []string, by ...string) map[string]float64 {
	t.Helper()
	sums, err := scrapeSeries(url, metric, labels, by...)
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// scrapeSeries sums the series of a metric at a metrics endpoint whose
// labels include every one of labels (as name="value"), by the values of
// the labels named in by (joined by a space; "" when by is empty). It
// returns an error rather than failing a test, so that a goroutine can
// poll with it.
func scrapeSeries(url, metric string, labels []string, by ...string) (map[string]float64, error) {
	rsp, err := http.Get(url) //nolint:noctx // a loopback scrape in a test
	if err != nil {
		return nil, fmt.Errorf("cannot scrape %s: %w", url, err)
	}
	defer rsp.Body.Close()
	sums := map[string]float64{}
	s := bufio.NewScanner(rsp.Body)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		l := s.Text()
		series, _, _ := strings.Cut(l, " ")
		if !strings.HasPrefix(l, metric+"{") || !every(labels, func(label string) bool { return strings.Contains(series, label) }) {
			continue
		}
		v, err := strconv.ParseFloat(l[strings.LastIndex(l, " ")+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot read %q: %w", url, l, err)
		}
		key := make([]string, len(by))
		for i, name := range by {
			key[i] = labelValue(series, name)
		}
		sums[strings.Join(key, " ")] += v
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", url, err)
	}
	return sums, nil
}

// labelValue is the value of a label in a series of the text exposition
// format (metric{a="x",b="y"}), "" when it has none.
func labelValue(series, name string) string {
	for _, sep := range []string{"{", ","} {
		if _, rest, ok := strings.Cut(series, sep+name+`="`); ok {
			v, _, _ := strings.Cut(rest, `"`)
			return v
		}
	}
	return ""
}

// every reports whether ok holds for every element of s.
func every[T any](s []T, ok func(T) bool) bool {
	return !slices.ContainsFunc(s, func(v T) bool { return !ok(v) })
}

// command is the path of an operators' command (fn/cmd/<name>) as `make
// build` built it beside the function: the binary a release ships.
func command(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(filepath.Dir(os.Getenv("FUNCTION_BIN")), name)
	if _, err := os.Stat(bin); os.Getenv("FUNCTION_BIN") == "" || err != nil {
		t.Fatalf("no %s beside FUNCTION_BIN %q: run through make e2e, whose make build builds fn/cmd/%s", name, os.Getenv("FUNCTION_BIN"), name)
	}
	return bin
}
