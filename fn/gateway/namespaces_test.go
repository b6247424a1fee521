package gateway

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

func TestNamespacePatches(t *testing.T) {
	mine := map[string]string{AnnotationAttachedBy: "tenant-root"}
	gwLabel := map[string]string{kube.LabelNamespaceGateway: "tenant-root"}
	in := Input{
		Spec: v1alpha1.TenantGatewaySpec{AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-new", "cozy-ours", "cozy-tenant", "cozy-other", "cozy-missing"}},
		NamedNamespaces: map[string]*Namespace{
			"tenant-root":  {Name: "tenant-root"},
			"cozy-new":     {Name: "cozy-new"},
			"cozy-ours":    {Name: "cozy-ours", Labels: gwLabel, Annotations: mine},
			"cozy-tenant":  {Name: "cozy-tenant", Labels: gwLabel},
			"cozy-other":   {Name: "cozy-other", Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-x"}, Annotations: map[string]string{AnnotationAttachedBy: "tenant-x"}},
			"cozy-missing": nil,
			"cozy-left":    {Name: "cozy-left", Labels: gwLabel, Annotations: mine},
			"cozy-done":    {Name: "cozy-done"},
		},
		Observed: map[string]*kube.ObservedResource{NamespaceKey("cozy-left"): {}, NamespaceKey("cozy-done"): {}, NamespaceKey("cozy-deleted"): {}},
	}
	out := run(t, in)
	got := map[string]string{}
	for _, r := range out.Resources {
		ns, ok := NamespaceOfKey(r.Key)
		if !ok {
			continue
		}
		got[ns] = manifestOf(t, r)
	}
	attach := `{"apiVersion":"v1","kind":"Namespace","metadata":{"annotations":{"cozystack.io/gateway-attached-by":"tenant-root"},"labels":{"namespace.cozystack.io/gateway":"tenant-root"},"name":"%s"}}`
	release := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"%s"}}`
	want := map[string]string{
		"tenant-root": fmt.Sprintf(attach, "tenant-root"), // unlabelled: ours to label
		"cozy-new":    fmt.Sprintf(attach, "cozy-new"),
		"cozy-ours":   fmt.Sprintf(attach, "cozy-ours"),  // labelled by us: kept
		"cozy-left":   fmt.Sprintf(release, "cozy-left"), // left the list, still marked: released
		// cozy-tenant: labelled by the tenant layer; cozy-other: by another
		// TenantGateway; cozy-missing: does not exist yet; cozy-done and
		// cozy-deleted: marks gone, so their Objects leave.
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("namespace patches (namespace → manifest): -want, +got:\n%s", diff)
	}
}

func TestNamespaceSets(t *testing.T) {
	attached := []v1alpha1.DNSLabel{"cozy-b", "tenant-root", "cozy-a"}
	cases := map[string]struct {
		reason string
		got    []string
		want   []string
	}{
		"Attached": {
			reason: "The owner first, then each attached namespace in spec order; the owner listed again is not repeated",
			got:    AttachedNamespaces("tenant-root", attached),
			want:   []string{"tenant-root", "cozy-b", "cozy-a"},
		},
		"Named": {
			reason: "The attached namespaces, then the namespaces of observed patches by key; other keys and attached namespaces are not repeated",
			got: NamedNamespaces("tenant-root", attached, slices.Values([]string{
				NamespaceKey("cozy-left"), KeyGateway, NamespaceKey("cozy-b"), NamespaceKey("cozy-gone"),
			})),
			want: []string{"tenant-root", "cozy-b", "cozy-a", "cozy-gone", "cozy-left"},
		},
		"Routes": {
			reason: "The owner, the attached and the labelled namespaces, sorted, each once; an empty name is skipped",
			got:    RouteNamespaces("tenant-root", attached, []string{"tenant-x", "", "cozy-a"}),
			want:   []string{"cozy-a", "cozy-b", "tenant-root", "tenant-x"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
