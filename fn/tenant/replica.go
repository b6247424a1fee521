package tenant

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kclusterv1alpha2 "github.com/crossplane-contrib/provider-kubernetes/apis/cluster/object/v1alpha2"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// Keys and marks of the wildcard replica (see Tenants: the wildcard replica
// in docs/design.md).
const (
	// KeyReplica holds the replica Secret: it creates it, never updates it,
	// and deletes it only once it has observed it as the replica.
	KeyReplica = "wildcard-secret"
	// KeyReplicaData fills the replica with the operator's Secret's data.
	KeyReplicaData = "wildcard-secret-data"
	// LabelReplicaOf marks a replica with the namespace of the Secret it
	// copies; a Secret of the listeners' name without it is someone else's.
	LabelReplicaOf = "cozystack.io/wildcard-replica-of"
	// finalizerObject is provider-kubernetes' own finalizer on an Object. The
	// data Object carries it from the start, so the provider never updates
	// the Object to add it: that update would store the manifest it has just
	// filled from the operator's Secret, key included, in the Object's spec.
	finalizerObject = "finalizer.managedresource.crossplane.io"
)

// ObservedSecret is what provider-kubernetes observed of the Secret of the
// listeners' name in the tenant namespace, read from the replica Object's
// status, whose Secret data the provider redacts (--sanitize-secrets).
type ObservedSecret struct {
	Labels map[string]string
}

// replicaWanted reports whether an owning tenant's namespace needs a replica
// of the operator's Secret: in existingSecret mode its listeners refer to it
// by name in their own namespace, and only the namespace holding the Secret,
// the publishing tenant's, has it already.
func replicaWanted(p Platform, ns string, spec v1alpha1.TenantGatewaySpec) bool {
	return spec.CertMode == v1alpha1.CertModeExistingSecret && p.WildcardSecret != "" && ns != p.IngressName
}

// replicaResources are the two Objects that keep a copy of the operator's
// Secret in an owning tenant's namespace, and a warning when a Secret of
// that name is someone else's. The copy is made by provider-kubernetes from
// the Object's references, so the key never passes through the function;
// the source is the platform's, never the tenant's to choose.
func replicaResources(in Input, ns string) ([]kube.Resource, string, error) {
	p := in.Platform
	holderPolicies := xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate}
	ours := in.WildcardSecret != nil && in.WildcardSecret.Labels[LabelReplicaOf] == p.IngressName
	if ours {
		holderPolicies = append(holderPolicies, xpv2.ManagementActionDelete)
	}
	holder, err := object(objectName(KeyReplica, ns), replicaSecret(p, ns, true), holderPolicies)
	if err != nil {
		return nil, "", err
	}
	out := make([]kube.Resource, 0, 2)
	out = append(out, kube.Resource{Key: KeyReplica, Object: holder})
	if !ours {
		warning := ""
		if in.WildcardSecret != nil {
			warning = fmt.Sprintf("Secret %s/%s exists without the label %s=%s, so it is not the wildcard replica and is left as it is: the tenant's HTTPS listeners use it; delete it to get the replica of %s/%s", ns, p.WildcardSecret, LabelReplicaOf, p.IngressName, p.IngressName, p.WildcardSecret)
		}
		return out, warning, nil
	}
	data, err := object(objectName(KeyReplicaData, ns), replicaSecret(p, ns, false), xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionUpdate})
	if err != nil {
		return nil, "", err
	}
	data.Finalizers = []string{finalizerObject}
	data.Spec.References = []kclusterv1alpha2.Reference{{
		PatchesFrom: &kclusterv1alpha2.PatchesFrom{
			DependsOn: kclusterv1alpha2.DependsOn{APIVersion: "v1", Kind: "Secret", Namespace: p.IngressName, Name: p.WildcardSecret},
			FieldPath: ptr("data"),
		},
		ToFieldPath: ptr("data"),
	}}
	return append(out, kube.Resource{Key: KeyReplicaData, Object: data}), "", nil
}

// replicaSecret is the manifest of the replica: marked, of type TLS. The
// holder creates it with empty keys (a TLS Secret must have both); the data
// Object's manifest has no data of its own, the provider fills it.
func replicaSecret(p Platform, ns string, empty bool) *corev1.Secret {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: p.WildcardSecret, Namespace: ns, Labels: map[string]string{LabelReplicaOf: p.IngressName}},
		Type:       corev1.SecretTypeTLS,
	}
	if empty {
		s.Data = map[string][]byte{corev1.TLSCertKey: {}, corev1.TLSPrivateKeyKey: {}}
	}
	return s
}

func ptr(s string) *string { return &s }
