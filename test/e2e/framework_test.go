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
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	// The platform settings, as install step 4 applies them, once for every
	// test: a test that applied them with apply() would delete them when it
	// ended, under the Tenants of every test still running. A test that
	// needs other settings is not parallel and puts these back.
	if err := applyDocs(context.Background(), k8s, readFile("examples", "cluster", "platform.yaml")); err != nil {
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
