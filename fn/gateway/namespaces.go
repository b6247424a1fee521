package gateway

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kobjv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/object/v1alpha1"
	kv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/v1alpha1"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// AnnotationAttachedBy marks the namespaces whose gateway label the function
// wrote, with the TenantGateway namespace that wrote it. A gateway label
// without it belongs to the tenant layer and is never touched.
const AnnotationAttachedBy = "cozystack.io/gateway-attached-by"

const keyNamespacePrefix = "namespace-"

// NamespaceKey is the composition resource name of a namespace's patch.
func NamespaceKey(ns string) string { return keyNamespacePrefix + ns }

// NamespaceOfKey returns the namespace a patch key names, if it is one.
func NamespaceOfKey(key string) (string, bool) { return strings.CutPrefix(key, keyNamespacePrefix) }

func isNamespaceKey(key string) bool { return strings.HasPrefix(key, keyNamespacePrefix) }

// NamespaceObjectName is the provider-kubernetes Object patching a
// namespace: <tgw>-ns-<ns>-<hex8 of tgw/ns>. The hash tells apart the pairs
// whose names would otherwise join into one string (tgw a attaching b-ns-c,
// tgw a-ns-b attaching c), and every name goes through the ownership guard,
// so an Object of another TenantGateway is never taken over. A name over
// the limit of an object name falls back to <hex16 of tgw/ns>-ns-patch.
func NamespaceObjectName(tgw, ns string) string { return writerName(tgw, ns, "ns", "ns-patch") }

// AttachedNamespaces are the namespaces the function labels: the
// TenantGateway's own (namespace) and each attached one, in that order.
func AttachedNamespaces(namespace string, attached []v1alpha1.DNSLabel) []string {
	out := []string{namespace}
	for _, a := range attached {
		if string(a) != namespace {
			out = append(out, string(a))
		}
	}
	return out
}

// NamedNamespaces are the namespaces a run looks up by name (Input.NamedNamespaces):
// the attached ones (AttachedNamespaces) and then, by key, the namespace
// of each patch Crossplane observed, so that a patch can release its label
// once its namespace leaves the list (see Namespace patches in
// docs/design.md).
func NamedNamespaces(namespace string, attached []v1alpha1.DNSLabel, observedKeys iter.Seq[string]) []string {
	out := AttachedNamespaces(namespace, attached)
	seen := make(map[string]bool, len(out))
	for _, n := range out {
		seen[n] = true
	}
	for _, key := range slices.Sorted(observedKeys) {
		if ns, ok := NamespaceOfKey(key); ok && !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	return out
}

// RouteNamespaces are the namespaces whose routes a run reads, sorted: the
// TenantGateway's own, the attached ones and those labelled (the names of
// the namespaces whose LabelNamespaceGateway is namespace). They are the
// admitted namespaces (see "Who may attach" in docs/design.md) and the
// attached ones another Gateway's owner labelled, which only the namespaces
// looked up by name tell apart: their routes are read and ignored.
func RouteNamespaces(namespace string, attached []v1alpha1.DNSLabel, labelled []string) []string {
	set := map[string]bool{namespace: true}
	for _, a := range attached {
		set[string(a)] = true
	}
	for _, n := range labelled {
		if n != "" {
			set[n] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// namespacePatches composes the label patches (see Namespace patches in
// docs/design.md) as provider-
// kubernetes Objects that may only observe and update (never create or
// delete) their namespace. A namespace that does not exist yet is skipped
// and retried next run; one whose gateway label was set by someone else is
// left alone. A namespace that left the list keeps an Object whose manifest
// no longer carries the label or annotation until the namespace shows them
// gone: server-side apply removes the fields the Object owned, and only then
// does the Object leave desired state.
func namespacePatches(in *Input, t *tenancy) ([]kube.Resource, error) {
	attach, err := attachPatches(in, t.attached)
	if err != nil {
		return nil, err
	}
	release, err := releasePatches(in, t.attached)
	if err != nil {
		return nil, err
	}
	return append(attach, release...), nil
}

// attachPatches label the attached namespaces that exist and whose gateway
// label is unset or ours.
func attachPatches(in *Input, attached []string) ([]kube.Resource, error) {
	var out []kube.Resource
	for _, ns := range attached {
		n, ok := in.NamedNamespaces[ns]
		if !ok || n == nil {
			continue
		}
		if l := n.Labels[kube.LabelNamespaceGateway]; l != "" && n.Annotations[AnnotationAttachedBy] != in.Namespace {
			continue
		}
		o, err := namespaceObject(in, ns, true)
		if err != nil {
			return nil, err
		}
		out = append(out, kube.Resource{Key: NamespaceKey(ns), Object: o})
	}
	return out, nil
}

// releasePatches keep, with a manifest that no longer sets them, the patches
// of namespaces that left the list while the namespace still shows our marks.
func releasePatches(in *Input, attached []string) ([]kube.Resource, error) {
	wanted := map[string]bool{}
	for _, ns := range attached {
		wanted[ns] = true
	}
	var out []kube.Resource
	for _, key := range slices.Sorted(maps.Keys(in.Observed)) {
		ns, ok := NamespaceOfKey(key)
		if !ok || wanted[ns] {
			continue
		}
		n := in.NamedNamespaces[ns]
		if n == nil || n.Annotations[AnnotationAttachedBy] != in.Namespace {
			continue // Gone, or our marks are: the Object may leave.
		}
		o, err := namespaceObject(in, ns, false)
		if err != nil {
			return nil, err
		}
		out = append(out, kube.Resource{Key: key, Object: o})
	}
	return out, nil
}

// namespaceObject is the Object that sets (or, with attach false, releases)
// the gateway label and the attached-by annotation on one namespace.
func namespaceObject(in *Input, ns string, attach bool) (*kobjv1alpha1.Object, error) {
	manifest := corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: ns},
	}
	if attach {
		manifest.Labels = map[string]string{kube.LabelNamespaceGateway: in.Namespace}
		manifest.Annotations = map[string]string{AnnotationAttachedBy: in.Namespace}
	}
	raw, err := jsonobj.Manifest(&manifest)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the manifest of namespace %s: %w", ns, err)
	}
	return &kobjv1alpha1.Object{
		TypeMeta: metav1.TypeMeta{APIVersion: kobjv1alpha1.SchemeGroupVersion.String(), Kind: kobjv1alpha1.ObjectKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      NamespaceObjectName(in.Name, ns),
			Namespace: in.Namespace,
			Labels:    commonLabels(in),
		},
		Spec: kobjv1alpha1.ObjectSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{
				ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: kv1alpha1.ClusterProviderConfigKind, Name: kube.ProviderConfigName},
				ManagementPolicies:      xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionUpdate},
			},
			ForProvider: kobjv1alpha1.ObjectParameters{Manifest: raw},
		},
	}, nil
}
