//go:build e2e

package e2e

import (
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
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
