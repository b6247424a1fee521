//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// Usages provider-kubernetes records of its provider configs, one per
// managed resource: cluster-scoped for cluster-scoped Objects, namespaced
// for namespaced ones.
var (
	gvkClusterUsage    = schema.GroupVersionKind{Group: "kubernetes.crossplane.io", Version: "v1alpha1", Kind: "ProviderConfigUsage"}
	gvkNamespacedUsage = schema.GroupVersionKind{Group: "kubernetes.m.crossplane.io", Version: "v1alpha1", Kind: "ProviderConfigUsage"}
)

// usersOfDefault lists the managed resources provider-kubernetes records as
// using a provider config named default, the platform's
// (testdata/platform-provider-configs.yaml).
func usersOfDefault(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, gvk := range []schema.GroupVersionKind{gvkClusterUsage, gvkNamespacedUsage} {
		for _, u := range list(t, gvk, "") {
			if str(&u, "providerConfigRef", "name") == "default" {
				out = append(out, fmt.Sprintf("%s %s/%s", str(&u, "resourceRef", "kind"), u.GetNamespace(), str(&u, "resourceRef", "name")))
			}
		}
	}
	return out
}

// TestPlatformsOwnObjectsLeftAlone: what the platform had made for a
// provider-kubernetes of its own before the install (up.sh applies
// testdata/platform-runtime.yaml before install step 1 and
// testdata/platform-provider-configs.yaml before step 4) is as the
// platform wrote it: its DeploymentRuntimeConfig, its runtime ImageConfig
// for the upstream source, and its ProviderConfig and ClusterProviderConfig
// named default, each at its first generation (no writer changed its spec)
// and with the spec the platform gave; and no composed Object uses either
// default.
func TestPlatformsOwnObjectsLeftAlone(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"platform-runtime.yaml", "platform-provider-configs.yaml"} {
		want, err := decode(readFile("test", "e2e", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			got, ok := get(t, w.GroupVersionKind(), "", w.GetName())
			if !ok {
				t.Errorf("%s %s of the platform (%s) is gone", w.GetKind(), w.GetName(), f)
				continue
			}
			if got.GetGeneration() != 1 {
				t.Errorf("%s %s of the platform was changed after it was made: generation %d, want 1\n%s", w.GetKind(), w.GetName(), got.GetGeneration(), show(got))
			}
			if path := differs(w.Object["spec"], got.Object["spec"], "spec"); path != "" {
				t.Errorf("%s %s of the platform: %s is not what the platform wrote\n%s", w.GetKind(), w.GetName(), path, show(got))
			}
		}
	}
	if users := usersOfDefault(t); len(users) > 0 {
		t.Errorf("Objects use the platform's provider config default: %v", users)
	}
}

// differs is the path of the first field of want that got does not hold
// with the same value, or "" (fields the API server defaulted in got are
// not compared).
func differs(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path
		}
		for k, v := range w {
			if p := differs(v, g[k], path+"."+k); p != "" {
				return p
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path
		}
		for i := range w {
			if p := differs(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
		return ""
	default:
		if !reflect.DeepEqual(want, got) {
			return path
		}
		return ""
	}
}

// The coexist pass (make e2e with E2E_COEXIST=1, test/e2e/hack/coexist.sh):
// our install beside a provider-kubernetes another party installed and
// runs, as docs/install.md's "A cluster that already runs
// provider-kubernetes" says.
const (
	// platformProviderUser is the identity of the platform's
	// provider-kubernetes (testdata/platform-runtime.yaml's runtime config).
	platformProviderUser = "system:serviceaccount:crossplane-system:platform-provider-kubernetes"
	// ourProviderUser is the identity our runtime config gives our
	// provider (examples/cluster/provider-kubernetes-runtime.yaml).
	ourProviderUser = "system:serviceaccount:crossplane-system:tenant-gateway-provider-kubernetes"
)

// coexistPass is whether the harness installed beside the platform's
// provider-kubernetes.
func coexistPass() bool { return os.Getenv("E2E_COEXIST") == "1" }

// trustedCallers is examples/cluster/trusted-callers.yaml as the install
// applies it: in the coexist pass with our provider's user name replaced
// by the platform's provider's, as docs/install.md says.
func trustedCallers() (string, error) {
	tc := readFile("examples", "cluster", "trusted-callers.yaml")
	if !coexistPass() {
		return tc, nil
	}
	if !strings.Contains(tc, ourProviderUser) {
		return "", fmt.Errorf("examples/cluster/trusted-callers.yaml does not name %s, which docs/install.md tells a platform with its own provider-kubernetes to replace", ourProviderUser)
	}
	return strings.ReplaceAll(tc, ourProviderUser, platformProviderUser), nil
}

// readList reads a List the harness wrote under E2E_DIR/run.
func readList(t *testing.T, elem ...string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{os.Getenv("E2E_DIR"), "run"}, elem...)...))
	if err != nil {
		t.Fatalf("cannot read what the coexist pass wrote: %v", err)
	}
	objs, err := decode(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 1 && objs[0].IsList() {
		l, err := objs[0].ToList()
		if err != nil {
			t.Fatal(err)
		}
		objs = nil
		for i := range l.Items {
			objs = append(objs, &l.Items[i])
		}
	}
	return objs
}

// platformView is what the platform made of an object, and what a writer
// that took it over would change: its labels, annotations, owners and
// generation, and its spec (a service account's secrets and token
// setting, a binding's subjects and role). Status and the metadata every
// write touches are left out.
func platformView(u *unstructured.Unstructured) map[string]any {
	md, _ := u.Object["metadata"].(map[string]any)
	v := map[string]any{"labels": md["labels"], "annotations": md["annotations"], "ownerReferences": md["ownerReferences"], "generation": md["generation"]}
	for _, k := range []string{"spec", "secrets", "imagePullSecrets", "automountServiceAccountToken", "subjects", "roleRef"} {
		if f, ok := u.Object[k]; ok {
			v[k] = f
		}
	}
	// Through JSON, so that numbers compare alike whether read from a
	// file (float64) or from the API server (int64).
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("cannot encode %s: %v", objectKey(u), err))
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("cannot decode %s: %v", objectKey(u), err))
	}
	return out
}

func objectKey(u *unstructured.Unstructured) string {
	return fmt.Sprintf("%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
}

// bindingKinds are the kinds of the bindings the snapshots list.
var bindingKinds = map[string]bool{"ClusterRoleBinding": true, "RoleBinding": true}

// TestCoexistingProvider: beside a provider-kubernetes another party
// installed and runs (the Provider provider-kubernetes from the platform's
// registry, its own runtime config and service account, its own
// activation policy, its provider config default and an Object using it):
//   - our install as on an empty cluster is refused: our ProviderRevision
//     is unhealthy, naming a CRD or ManagedResourceDefinition of
//     provider-kubernetes and the platform's revision that controls it;
//   - installed as docs/install.md says for that case, a TenantGateway is
//     served end to end through the platform's provider: its Gateway
//     composed with the route's listener, the route accepted by Envoy
//     Gateway, the attached namespace labelled by an Object of our
//     ClusterProviderConfig, applied by that provider;
//   - the platform's Object on its provider config default still works,
//     and is the only user of default;
//   - every object of the platform (Provider and revision, runtime config
//     and ImageConfig, activation policy, provider config, Object,
//     Deployment, service account, the CRDs and ManagedResourceDefinitions
//     its revision controls) has the labels, annotations, owners,
//     generation and spec it had before our install, both when our
//     provider was refused and at the end; the platform's service account
//     is bound by what it was bound by before, plus our two
//     ClusterRoleBindings, the one addition docs/install.md makes; no
//     other Provider runs, and no ClusterProviderConfig default exists.
func TestCoexistingProvider(t *testing.T) {
	if !coexistPass() {
		t.Skip("the coexist pass only (E2E_COEXIST=1)")
	}
	before := readList(t, "coexist", "before.json")
	var platformRev string
	for _, u := range before {
		if u.GetKind() == "ProviderRevision" {
			platformRev = u.GetName()
		}
	}
	if platformRev == "" {
		t.Fatal("the coexist pass recorded no ProviderRevision of the platform's provider")
	}

	// Refused, naming what the platform's revision controls.
	refusedRev := readList(t, "coexist", "refused-revision.json")
	if len(refusedRev) != 1 {
		t.Fatalf("want our refused ProviderRevision, got %d objects", len(refusedRev))
	}
	s, _, msg := condition(refusedRev[0], "RevisionHealthy")
	m := regexp.MustCompile(`(\S+) is already controlled by ProviderRevision (\S+) \(UID`).FindStringSubmatch(msg)
	switch {
	case s != "False" || m == nil:
		t.Errorf("our ProviderRevision %s RevisionHealthy %s %q; want False naming the object the platform's revision controls", refusedRev[0].GetName(), s, msg)
	case !regexp.MustCompile(`\.kubernetes(\.m)?\.crossplane\.io$`).MatchString(m[1]) || m[2] != platformRev:
		t.Errorf("our ProviderRevision was refused %s, controlled by %s; want an object of provider-kubernetes controlled by the platform's revision %s (%q)", m[1], m[2], platformRev, msg)
	default:
		t.Logf("our provider, installed as a dependency, was refused: %s", msg)
	}

	// Served end to end through the platform's provider.
	const tgwNS, apps, host = "tenant-coexist", "coexist-apps", "www.coexist.example"
	tenantNamespaces(t, tgwNS, "coexist.example", nil)
	namespace(t, apps, map[string]string{"team": "apps"})
	apply(t, strings.Replace(envoyTenantGateway(tgwNS, "coexist.example"), "  gatewayClassName: envoy\n", "  gatewayClassName: envoy\n  attachedNamespaces: ["+apps+"]\n", 1))
	apply(t, httpRoute(apps, "www", tgwNS, "cozystack", host))
	eventually(t, oneTTL+settle, "namespace "+apps+" labelled and annotated by the namespace patch", func() (bool, string) {
		l, a, all := marks(t, apps)
		return l == tgwNS && a == tgwNS, fmt.Sprintf("labels %v, annotation %q", all, a)
	})
	eventually(t, settle, "the namespace patch Object Ready and Synced, on our ClusterProviderConfig", func() (bool, string) {
		o, found := get(t, gvkNSObject, tgwNS, gateway.NamespaceObjectName("cozystack", apps))
		r, _, _ := condition(o, "Ready")
		sy, _, _ := condition(o, "Synced")
		ref := fmt.Sprintf("%s/%s", str(o, "spec", "providerConfigRef", "kind"), str(o, "spec", "providerConfigRef", "name"))
		return found && r == "True" && sy == "True" && ref == "ClusterProviderConfig/function-tenant-gateway", fmt.Sprintf("providerConfigRef %s; %s", ref, show(o))
	})
	waitGateway(t, tgwNS, "cozystack", "a listener for "+host, func(_ []string, gw *unstructured.Unstructured) bool { return listenerFor(gw, host) != "" })
	eventually(t, oneTTL+settle, "route www accepted by Envoy Gateway", func() (bool, string) {
		rt, _ := get(t, gvkHTTPRoute, apps, "www")
		a := routeAccepted(rt, tgwNS, "cozystack")
		return a == "True/Accepted", a
	})

	// The platform's own Object, on its default, works and is alone there.
	o, _ := get(t, schema.GroupVersionKind{Group: "kubernetes.crossplane.io", Version: "v1alpha2", Kind: "Object"}, "", "platform-settings")
	if r, _, _ := condition(o, "Ready"); r != "True" {
		t.Errorf("the platform's Object on its provider config default is not ready: %s", show(o))
	}
	if d := cmp.Diff([]string{"Object /platform-settings"}, usersOfDefault(t)); d != "" {
		t.Errorf("users of the platform's provider config default (-want +got):\n%s", d)
	}

	// Nothing else runs or was made in the platform's names.
	var providers []string
	for _, p := range list(t, gvkProvider, "") {
		providers = append(providers, p.GetName())
	}
	if d := cmp.Diff([]string{"provider-kubernetes"}, providers); d != "" {
		t.Errorf("Providers (-want +got):\n%s", d)
	}
	if _, found := get(t, schema.GroupVersionKind{Group: "kubernetes.m.crossplane.io", Version: "v1alpha1", Kind: "ClusterProviderConfig"}, "", "default"); found {
		t.Error("a ClusterProviderConfig default exists, which neither the platform nor our install made")
	}

	// The platform's objects, as they were.
	now := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		got, _ := get(t, u.GroupVersionKind(), u.GetNamespace(), u.GetName())
		return got
	}
	snapshots := map[string]func(*unstructured.Unstructured) *unstructured.Unstructured{"at the end": now}
	refused := map[string]*unstructured.Unstructured{}
	for _, u := range readList(t, "coexist", "refused.json") {
		refused[objectKey(u)] = u
	}
	snapshots["when our provider was refused"] = func(u *unstructured.Unstructured) *unstructured.Unstructured { return refused[objectKey(u)] }
	for when, read := range snapshots {
		for _, u := range before {
			if bindingKinds[u.GetKind()] {
				continue
			}
			got := read(u)
			if got == nil {
				t.Errorf("%s of the platform is gone %s", objectKey(u), when)
				continue
			}
			if d := cmp.Diff(platformView(u), platformView(got)); d != "" {
				t.Errorf("%s of the platform changed %s (-before +then):\n%s", objectKey(u), when, d)
			}
		}
	}

	// What binds the platform's service account: what did before, plus our
	// two ClusterRoleBindings (docs/install.md) at the end.
	bindings := func(objs []*unstructured.Unstructured) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, u := range objs {
			if bindingKinds[u.GetKind()] {
				out[objectKey(u)] = platformView(u)
			}
		}
		return out
	}
	want := bindings(before)
	if d := cmp.Diff(want, bindings(readList(t, "coexist", "refused.json"))); d != "" {
		t.Errorf("bindings of the platform's service account when our provider was refused (-before +then):\n%s", d)
	}
	var current []*unstructured.Unstructured
	for _, gvk := range []schema.GroupVersionKind{gvkCRB, {Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}} {
		for _, b := range list(t, gvk, "") {
			for _, s := range slice(&b, "subjects") {
				if m, _ := s.(map[string]any); m["kind"] == "ServiceAccount" && m["name"] == "platform-provider-kubernetes" && m["namespace"] == "crossplane-system" {
					current = append(current, b.DeepCopy())
					break
				}
			}
		}
	}
	got := bindings(current)
	for _, name := range []string{"function-tenant-gateway:provider-kubernetes", "function-tenant-gateway:wildcard-replica"} {
		k := "ClusterRoleBinding /" + name
		if _, ok := got[k]; !ok {
			t.Errorf("%s does not bind the platform's service account, as docs/install.md says to", name)
		}
		delete(got, k)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("bindings of the platform's service account at the end, but for our two (-before +now):\n%s", d)
	}
}
