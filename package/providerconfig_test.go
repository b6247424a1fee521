package packages

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Groups of provider-kubernetes' cluster-scoped and namespaced APIs.
const (
	groupCluster    = "kubernetes.crossplane.io"
	groupNamespaced = "kubernetes.m.crossplane.io"
)

// decoded reads every document of a file as an unstructured object.
func decoded(t *testing.T, elem ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range documents(t, elem...) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("cannot decode a document of %s: %v", filepath.Join(elem...), err)
		}
		out = append(out, u)
	}
	return out
}

// shippedProviderConfigs are the provider configs the install applies
// (examples/cluster/provider-kubernetes.yaml), as group/Kind/name.
func shippedProviderConfigs(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, u := range decoded(t, "examples", "cluster", "provider-kubernetes.yaml") {
		out = append(out, u.GroupVersionKind().Group+"/"+u.GetKind()+"/"+u.GetName())
	}
	return out
}

// providerConfigOf is the provider config an Object uses, as
// group/Kind/name, with provider-kubernetes' schema defaults applied: a
// cluster-scoped Object without a reference uses the ProviderConfig
// default, a namespaced one the ClusterProviderConfig default.
func providerConfigOf(u *unstructured.Unstructured) string {
	group := u.GroupVersionKind().Group
	name, _, _ := unstructured.NestedString(u.Object, "spec", "providerConfigRef", "name")
	if name == "" {
		name = "default"
	}
	kind := "ProviderConfig"
	if group == groupNamespaced {
		kind = "ClusterProviderConfig"
		if k, _, _ := unstructured.NestedString(u.Object, "spec", "providerConfigRef", "kind"); k != "" {
			kind = k
		}
	}
	return group + "/" + kind + "/" + name
}

// TestComposedObjectsUseShippedProviderConfigs: every provider-kubernetes
// Object the function composes in any rendered scenario (the goldens of
// examples/*/expected.yaml and test/render/scenarios/*/expected.yaml,
// TenantGateways' namespaced Objects and Tenants' cluster-scoped ones) names a provider config the install ships under the
// project's name. An Object that named none would act through "default",
// the platform's provider config, possibly on another cluster.
func TestComposedObjectsUseShippedProviderConfigs(t *testing.T) {
	shipped := shippedProviderConfigs(t)
	var goldens []string
	for _, dir := range []string{"examples", filepath.Join("test", "render", "scenarios")} {
		g, err := filepath.Glob(filepath.Join("..", dir, "*", "expected.yaml"))
		if err != nil || len(g) == 0 {
			t.Fatalf("no golden found under %s: %v", dir, err)
		}
		goldens = append(goldens, g...)
	}
	seen := map[string]int{}
	var stray []string
	for _, g := range goldens {
		rel, _ := filepath.Rel("..", g)
		for _, u := range decoded(t, strings.Split(rel, string(filepath.Separator))...) {
			gvk := u.GroupVersionKind()
			if u.GetKind() != "Object" || (gvk.Group != groupCluster && gvk.Group != groupNamespaced) {
				continue
			}
			pc := providerConfigOf(u)
			seen[gvk.Group]++
			if !slices.Contains(shipped, pc) {
				stray = append(stray, fmt.Sprintf("%s: %s %s uses %s", rel, gvk.GroupKind(), u.GetName(), pc))
			}
		}
	}
	if len(stray) > 0 {
		t.Errorf("composed Objects use provider configs the install does not ship (shipped: %v):\n%s", shipped, strings.Join(stray, "\n"))
	}
	// Both kinds of Object were judged, so the test cannot pass on goldens
	// that compose none.
	for _, g := range []string{groupCluster, groupNamespaced} {
		if seen[g] == 0 {
			t.Errorf("no golden composes an Object of %s", g)
		}
	}
}

// TestNothingShippedIsNamedDefault: no object the install applies (every
// file of examples/cluster/, the mirror variant included) is named
// "default" in a Crossplane group. Applying such a file would overwrite the
// platform's own (client-side apply keeps the fields it does not set), and
// Uninstall's `kubectl delete -f` would delete it.
func TestNothingShippedIsNamedDefault(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "examples", "cluster", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mirror, err := filepath.Glob(filepath.Join("..", "examples", "cluster", "mirror", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, mirror...)
	var named []string
	crossplaneObjects := 0
	for _, f := range files {
		rel, _ := filepath.Rel("..", f)
		for _, u := range decoded(t, strings.Split(rel, string(filepath.Separator))...) {
			if !strings.HasSuffix(u.GroupVersionKind().Group, "crossplane.io") {
				continue
			}
			crossplaneObjects++
			if u.GetName() == "default" {
				named = append(named, rel+": "+schema.GroupKind{Group: u.GroupVersionKind().Group, Kind: u.GetKind()}.String()+" default")
			}
		}
	}
	if d := cmp.Diff([]string(nil), named); d != "" {
		t.Errorf("shipped objects named default (-want +got):\n%s", d)
	}
	if crossplaneObjects == 0 {
		t.Error("no Crossplane object found in examples/cluster/")
	}
}
