package gateway

import (
	"crypto/sha256"
	"encoding/hex"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	kobjv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/object/v1alpha1"
	kv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/v1alpha1"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// writerName names an Object of the owner's namespace that writes one
// object into namespace ns: <tgw>-<infix>-<ns>-<hex8 of tgw/ns>, or
// <hex16>-<suffix> over the limit of an object name (see
// NamespaceObjectName for why the hash).
func writerName(tgw, ns, infix, suffix string) string {
	sum := sha256.Sum256([]byte(tgw + "/" + ns))
	if n := tgw + "-" + infix + "-" + ns + "-" + hex.EncodeToString(sum[:4]); len(n) <= maxObjectName {
		return n
	}
	return hex.EncodeToString(sum[:8]) + "-" + suffix
}

// writerObject is the Object, in the owner's namespace, through which
// provider-kubernetes writes a manifest the function owns in another
// namespace (a route report, a zone guard): the default management
// policies, so it may create, update and delete what it writes.
func writerObject(in *Input, name string, manifest runtime.RawExtension) *kobjv1alpha1.Object {
	return &kobjv1alpha1.Object{
		TypeMeta: metav1.TypeMeta{APIVersion: kobjv1alpha1.SchemeGroupVersion.String(), Kind: kobjv1alpha1.ObjectKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: in.Namespace,
			Labels:    commonLabels(in),
		},
		Spec: kobjv1alpha1.ObjectSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{
				ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: kv1alpha1.ClusterProviderConfigKind, Name: kube.ProviderConfigName},
			},
			ForProvider: kobjv1alpha1.ObjectParameters{Manifest: manifest},
		},
	}
}
