package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-tenant-gateway/fn/live"
)

// served are the kinds a fake platform serves.
var served = []struct {
	apiVersion, kind string
	namespaced       bool
}{
	{"v1", "Namespace", false},
	{"v1", "ConfigMap", true},
	{"gateway.networking.k8s.io/v1", "Gateway", true},
	{"gateway.networking.k8s.io/v1", "GatewayClass", false},
	{"gateway.networking.k8s.io/v1", "HTTPRoute", true},
	{"gateway.networking.k8s.io/v1", "TLSRoute", true},
	{"cert-manager.io/v1", "Certificate", true},
	{"cert-manager.io/v1", "Issuer", true},
	{"cert-manager.io/v1", "ClusterIssuer", false},
	{"kubernetes.m.crossplane.io/v1alpha1", "Object", true},
	{"kubernetes.crossplane.io/v1alpha2", "Object", false},
	{"apiextensions.crossplane.io/v1", "Composition", false},
	{"apiextensions.crossplane.io/v1", "CompositionRevision", false},
	{"apiextensions.crossplane.io/v1beta1", "EnvironmentConfig", false},
	{"gateway.cozystack.io/v1alpha1", "TenantGateway", true},
	{"apps.cozystack.io/v1alpha1", "XTenant", false},
}

func resourceOf(apiVersion, kind string) (schema.GroupVersionResource, bool) {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	for _, s := range served {
		if s.apiVersion == apiVersion && s.kind == kind {
			// The fake client files objects under the resource it guesses.
			plural, _ := meta.UnsafeGuessKindToResource(gv.WithKind(kind))
			return plural, s.namespaced
		}
	}
	panic("not served: " + apiVersion + " " + kind)
}

// platform is a fake cluster: a dynamic client over objects in memory, and
// discovery of the kinds it serves.
type platform struct {
	dyn  *dynamicfake.FakeDynamicClient
	disc *fakediscovery.FakeDiscovery
}

func newPlatform(t testing.TB, objs ...*unstructured.Unstructured) *platform {
	t.Helper()
	listKinds := map[schema.GroupVersionResource]string{}
	byGV := map[string]*metav1.APIResourceList{}
	var lists []*metav1.APIResourceList
	for _, s := range served {
		gvr, _ := resourceOf(s.apiVersion, s.kind)
		listKinds[gvr] = s.kind + "List"
		l := byGV[s.apiVersion]
		if l == nil {
			l = &metav1.APIResourceList{GroupVersion: s.apiVersion}
			byGV[s.apiVersion] = l
			lists = append(lists, l)
		}
		l.APIResources = append(l.APIResources, metav1.APIResource{Name: gvr.Resource, Kind: s.kind, Namespaced: s.namespaced})
	}
	rt := make([]runtime.Object, 0, len(objs))
	for _, o := range objs {
		rt = append(rt, o)
	}
	return &platform{
		dyn:  dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, rt...),
		disc: &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: lists}},
	}
}

// reader reads the platform as it is now.
func (p *platform) reader() *live.Reader { return live.NewReader(p.dyn, p.disc) }

// get reads an object of the platform.
func (p *platform) get(t testing.TB, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := p.reader().Get(context.Background(), apiVersion, kind, ns, name)
	if err != nil || u == nil {
		t.Fatalf("cannot get %s %s/%s: %v", kind, ns, name, err)
	}
	return u
}

// put creates or updates an object: an update merges it into the live one,
// as server-side apply merges what a manager applies.
func (p *platform) put(t testing.TB, u *unstructured.Unstructured) {
	t.Helper()
	gvr, namespaced := resourceOf(u.GetAPIVersion(), u.GetKind())
	c := p.dyn.Resource(gvr).Namespace(u.GetNamespace())
	if !namespaced {
		u.SetNamespace("")
		c = p.dyn.Resource(gvr).Namespace("")
	}
	old, err := c.Get(context.Background(), u.GetName(), metav1.GetOptions{})
	if err != nil {
		if _, err := c.Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("cannot create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		return
	}
	merged := mergeInto(old.Object, u.Object)
	if _, err := c.Update(context.Background(), &unstructured.Unstructured{Object: merged}, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("cannot update %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

func mergeInto(dst, src map[string]any) map[string]any {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				dst[k] = mergeInto(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

// converge plays Crossplane until the platform is in the steady state: it
// runs the function on every composite resource and applies what it
// composes, its status and conditions, three times (the first run composes
// what the ownership probes allowed and writes the order ledger's record,
// the second orders the Certificates the record lets it).
func (p *platform) converge(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	for range 3 {
		pl := newPlanner(p.reader(), defaultOptions())
		xrs, err := pl.read.xrs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, xr := range xrs {
			st, err := pl.read.step(ctx, xr)
			if err != nil {
				t.Fatalf("%s %s: %v", xr.GetKind(), xr.GetName(), err)
			}
			_, rsp, _, err := live.Reconcile(ctx, pl.r, pl.function, st.req, st.bootstrap, nil)
			if err != nil {
				t.Fatal(err)
			}
			p.apply(t, xr, rsp)
		}
	}
}

// apply writes what a run composed as Crossplane would: each composed
// resource named for the function by its key, the XR's references to them,
// its status and its conditions.
func (p *platform) apply(t testing.TB, xr *unstructured.Unstructured, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			t.Fatalf("%s %s/%s: %s", xr.GetKind(), xr.GetNamespace(), xr.GetName(), r.GetMessage())
		}
	}
	cp := crossplaneFields(xr)
	var refs []any
	keys := make([]string, 0, len(rsp.GetDesired().GetResources()))
	for k := range rsp.GetDesired().GetResources() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		u := &unstructured.Unstructured{Object: rsp.GetDesired().GetResources()[k].GetResource().AsMap()}
		if _, namespaced := resourceOf(u.GetAPIVersion(), u.GetKind()); namespaced && u.GetNamespace() == "" {
			u.SetNamespace(xr.GetNamespace())
		}
		if u.GetName() == "" {
			u.SetName(xr.GetName() + "-" + k)
		}
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[annotationCompositionKey] = k
		u.SetAnnotations(a)
		p.put(t, u)
		refs = append(refs, map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "name": u.GetName()})
		if m, ok, _ := unstructured.NestedMap(u.Object, "spec", "forProvider", "manifest"); ok && m["kind"] == "ConfigMap" {
			// provider-kubernetes writes the order ledger's records and
			// the route reports the Objects carry.
			p.put(t, &unstructured.Unstructured{Object: m})
		}
	}
	live := p.get(t, xr.GetAPIVersion(), xr.GetKind(), xr.GetNamespace(), xr.GetName())
	if err := unstructured.SetNestedSlice(live.Object, refs, append(append([]string{}, cp...), "resourceRefs")...); err != nil {
		t.Fatal(err)
	}
	status, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
	}
	var conds []any
	for _, c := range rsp.GetConditions() {
		s := strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_")
		conds = append(conds, map[string]any{"type": c.GetType(), "status": s[:1] + strings.ToLower(s[1:]), "reason": c.GetReason(), "message": c.GetMessage()})
	}
	status["conditions"] = conds
	live.Object["status"] = status
	gvr, namespaced := resourceOf(xr.GetAPIVersion(), xr.GetKind())
	ns := ""
	if namespaced {
		ns = xr.GetNamespace()
	}
	if _, err := p.dyn.Resource(gvr).Namespace(ns).Update(context.Background(), live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// docs decodes YAML documents.
func docs(t testing.TB, s string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, d := range strings.Split(s, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
			t.Fatalf("cannot parse %q: %v", d, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
	return out
}

// shipped are the Compositions this project ships.
func shipped(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, f := range []string{"../../../package/configuration/tenantgateway/composition.yaml", "../../../package/configuration-tenant/tenant/composition.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, docs(t, string(b))...)
	}
	return out
}

// settings are platform settings of a platform whose publishing host is
// host.
func settings(host string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.crossplane.io/v1beta1
kind: EnvironmentConfig
metadata:
  name: tenant-gateway-platform
data:
  publishing:
    host: %s
    ingressName: tenant-root
  gateway:
    className: cilium
`, host)
}

// tenantPlatform is a platform of n gateway-owning tenants under
// tenant-root, each with a TenantGateway and two routes, in the state
// Crossplane and provider-kubernetes would have brought it to.
func tenantPlatform(t testing.TB, n int) *platform {
	t.Helper()
	objs := append(shipped(t), docs(t, settings("example.org")+`
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: cilium}
spec: {controllerName: io.cilium/gateway-controller}
---
apiVersion: v1
kind: Namespace
metadata:
  name: tenant-root
  labels:
    namespace.cozystack.io/host: example.org
`)...)
	for i := range n {
		name := fmt.Sprintf("t%d", i)
		ns, apex := "tenant-"+name, name+".example.org"
		objs = append(objs, docs(t, fmt.Sprintf(`apiVersion: apps.cozystack.io/v1alpha1
kind: XTenant
metadata:
  name: tenant-root-%[1]s
  labels:
    crossplane.io/claim-name: %[1]s
    crossplane.io/claim-namespace: tenant-root
spec:
  gateway: true
  compositionRef:
    name: tenant
---
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: %[2]s
  uid: uid-%[1]s
spec:
  apex: %[3]s
  crossplane:
    compositionRef:
      name: tenantgateway
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web
  namespace: %[2]s
spec:
  parentRefs:
  - name: cozystack
  hostnames: [www.%[3]s]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: api
  namespace: %[2]s
spec:
  parentRefs:
  - name: cozystack
  hostnames: [api.%[3]s]
`, name, ns, apex))...)
	}
	p := newPlatform(t, objs...)
	p.converge(t)
	return p
}
