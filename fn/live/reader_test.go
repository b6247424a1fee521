package live

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

func namespace(name string, labels map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name, "labels": labels}}}
}

func route(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": map[string]any{"name": name, "namespace": ns}}}
}

func TestReaderSelect(t *testing.T) {
	// The fake client files objects under the resource it guesses.
	nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	rtGVR := schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{nsGVR: "NamespaceList", rtGVR: "HTTPRouteList"},
		namespace("a", map[string]any{"gw": "a"}), namespace("b", map[string]any{"gw": "a", "x": "y"}), namespace("c", nil),
		route("a", "web"), route("b", "web"), route("b", "api"))
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "namespaces", Kind: "Namespace"}}},
		{GroupVersion: "gateway.networking.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "httproutes", Kind: "HTTPRoute", Namespaced: true}}},
	}}}
	ns := func(s string) *string { return &s }
	labels := func(l map[string]string) *fnv1.ResourceSelector_MatchLabels {
		return &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: l}}
	}
	cases := map[string]struct {
		sel      *fnv1.ResourceSelector
		override *unstructured.Unstructured
		want     []string
	}{
		"ByNamespaceAndName": {
			sel:  &fnv1.ResourceSelector{ApiVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute", Namespace: ns("b"), Match: &fnv1.ResourceSelector_MatchName{MatchName: "web"}},
			want: []string{"b/web"},
		},
		"ByNameInEveryNamespace": {
			sel:  &fnv1.ResourceSelector{ApiVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute", Match: &fnv1.ResourceSelector_MatchName{MatchName: "web"}},
			want: []string{"a/web", "b/web"},
		},
		"ByLabels": {
			sel:  &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Namespace", Match: labels(map[string]string{"gw": "a", "x": "y"})},
			want: []string{"/b"},
		},
		"AllInANamespace": {
			sel:  &fnv1.ResourceSelector{ApiVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute", Namespace: ns("b"), Match: labels(nil)},
			want: []string{"b/api", "b/web"},
		},
		"Overridden": {
			sel:      &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Namespace", Match: labels(map[string]string{"gw": "a"})},
			override: namespace("a", map[string]any{"gw": "other"}),
			want:     []string{"/b"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := NewReader(dyn, disc)
			if tc.override != nil {
				if err := r.Override(tc.override); err != nil {
					t.Fatal(err)
				}
			}
			objs, err := r.Select(context.Background(), tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, o := range objs {
				md := o.GetFields()["metadata"].GetStructValue().GetFields()
				got = append(got, md["namespace"].GetStringValue()+"/"+md["name"].GetStringValue())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
	if _, err := NewReader(dyn, disc).Select(context.Background(), &fnv1.ResourceSelector{ApiVersion: "example.org/v1", Kind: "Absent"}); err == nil {
		t.Error("a kind the cluster does not serve was selected without an error")
	}
}
