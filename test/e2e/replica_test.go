//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	gvkSecret        = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	gvkClusterObject = schema.GroupVersionKind{Group: "kubernetes.crossplane.io", Version: "v1alpha2", Kind: "Object"}
	gvkXTenant       = schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "XTenant"}
)

// replicaPlatform is examples/cluster/platform.yaml in existingSecret mode,
// publishing from the namespace replica-root (so that this test shares no
// namespace with the others), with an edge class a tenant may select.
func replicaPlatform(t *testing.T) string {
	t.Helper()
	p := platformSettings()
	for old, new := range map[string]string{
		"ingressName: tenant-root":    "ingressName: replica-root",
		`wildcardSecretName: ""`:      "wildcardSecretName: wildcard-tls",
		"tenantSelectableClasses: []": "tenantSelectableClasses: [edge-tunnel]",
		"edgeTerminatedClasses: []":   "edgeTerminatedClasses: [edge-tunnel]",
	} {
		if !strings.Contains(p, old) {
			t.Fatalf("examples/cluster/platform.yaml has no %q", old)
		}
		p = strings.ReplaceAll(p, old, new)
	}
	return p
}

// TestWildcardReplica: in existingSecret mode a Gateway-owning tenant gets
// the operator's Secret copied into its namespace by provider-kubernetes; the
// replica follows a change of the source (the provider polls every 15s here,
// 10 minutes by default); the key never appears in the XR, the claim or any
// Object, which is everything of the replica Crossplane sends the function;
// a move to an edge class removes the replica; a Secret of that name that
// someone else made is left as it is. Not parallel: it changes the platform
// settings every Tenant is derived from, and puts them back at the end.
func TestWildcardReplica(t *testing.T) {
	t.Cleanup(func() { _ = applyDocs(t.Context(), k8s, platformSettings()) })
	if err := applyDocs(t.Context(), k8s, replicaPlatform(t)); err != nil {
		t.Fatal(err)
	}
	namespace(t, "replica-root", map[string]string{"namespace.cozystack.io/host": "replica.example"})
	// Real key pairs, as an operator's wildcard Secret holds.
	cert1, key1 := selfSigned(t, "*.replica.example", "replica.example")
	cert, key := string(cert1), string(key1)
	source := func(cert, key string) string {
		return fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata: {name: wildcard-tls, namespace: replica-root}
type: kubernetes.io/tls
stringData: {tls.crt: %q, tls.key: %q}
`, cert, key)
	}
	apply(t, source(cert, key))
	claim := `
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: replica, namespace: replica-root}
spec: {gateway: true%s}
`
	apply(t, fmt.Sprintf(claim, ""))

	replicaHas := func(cert, key string) {
		t.Helper()
		eventually(t, oneTTL+settle+time.Minute, "Secret tenant-replica/wildcard-tls with the source's data, marked as the replica", func() (bool, string) {
			s, found := get(t, gvkSecret, "tenant-replica", "wildcard-tls")
			if !found {
				return false, "no replica"
			}
			return secretData(s, "tls.crt") == cert && secretData(s, "tls.key") == key && s.GetLabels()["cozystack.io/wildcard-replica-of"] == "replica-root" && str(s, "type") == string(corev1.SecretTypeTLS), show(s)
		})
	}
	replicaHas(cert, key)
	noKeyInRequests(t, key)

	// Renewal: the source changes (a new key pair, as a renewal brings),
	// the replica follows within a poll of provider-kubernetes (--poll=15s
	// here); the time it takes is logged (README, Automatic TLS).
	cert2, key2 := selfSigned(t, "*.replica.example", "replica.example")
	renewedCert, renewed := string(cert2), string(key2)
	rotated := time.Now()
	if err := applyDocs(t.Context(), k8s, source(renewedCert, renewed)); err != nil {
		t.Fatal(err)
	}
	replicaHas(renewedCert, renewed)
	t.Logf("rotation: the operator's Secret changed to the replica equal to it in %s (provider poll 15s)", time.Since(rotated).Round(100*time.Millisecond))
	noKeyInRequests(t, renewed)

	// A move to an edge class: the replica leaves desired state and the
	// holder, which observed it as the replica, deletes it.
	if err := applyDocs(t.Context(), k8s, fmt.Sprintf(claim, ", gatewayClass: edge-tunnel")); err != nil {
		t.Fatal(err)
	}
	eventually(t, oneTTL+settle, "no Secret tenant-replica/wildcard-tls and no replica Objects after the move to edge-tunnel", func() (bool, string) {
		s, found := get(t, gvkSecret, "tenant-replica", "wildcard-tls")
		_, holder := get(t, gvkClusterObject, "", "tenant-replica-wildcard-secret")
		_, data := get(t, gvkClusterObject, "", "tenant-replica-wildcard-secret-data")
		return !found && !holder && !data, fmt.Sprintf("secret %v, holder %v, data %v: %s", found, holder, data, show(s))
	})

	// Someone else's Secret of that name: back on the default class, the
	// holder observes it unmarked and nothing overwrites or deletes it.
	apply(t, `
apiVersion: v1
kind: Secret
metadata: {name: wildcard-tls, namespace: tenant-replica}
type: kubernetes.io/tls
stringData: {tls.crt: mine, tls.key: mine}
`)
	mine, _ := get(t, gvkSecret, "tenant-replica", "wildcard-tls")
	if err := applyDocs(t.Context(), k8s, fmt.Sprintf(claim, "")); err != nil {
		t.Fatal(err)
	}
	eventually(t, oneTTL+settle, "the holder observes the unmarked Secret and the claim warns about it", func() (bool, string) {
		h, found := get(t, gvkClusterObject, "", "tenant-replica-wildcard-secret")
		if !found {
			return false, "no holder"
		}
		observed := str(h, "status", "atProvider", "manifest", "metadata", "uid")
		labels, _, _ := unstructured.NestedStringMap(h.Object, "status", "atProvider", "manifest", "metadata", "labels")
		ev := events(t, "replica-root", "replica")
		return observed == str(mine, "metadata", "uid") && labels["cozystack.io/wildcard-replica-of"] == "" && strings.Contains(ev, "is not the wildcard replica"), fmt.Sprintf("events on the claim: %s\nholder: %s", ev, show(h))
	})
	// A poll of the holder after this point is what could overwrite the
	// Secret: mark the Secret and wait until the holder has observed the
	// mark, which it does on its next poll, so the check below follows a
	// poll rather than a guess at its period.
	apply(t, `
apiVersion: v1
kind: Secret
metadata: {name: wildcard-tls, namespace: tenant-replica, annotations: {e2e.cozystack.io/observed: mark}}
type: kubernetes.io/tls
stringData: {tls.crt: mine, tls.key: mine}
`)
	eventually(t, oneTTL+settle, "the holder observes the marked Secret", func() (bool, string) {
		h, _ := get(t, gvkClusterObject, "", "tenant-replica-wildcard-secret")
		a, _, _ := unstructured.NestedStringMap(h.Object, "status", "atProvider", "manifest", "metadata", "annotations")
		return a["e2e.cozystack.io/observed"] == "mark", show(h)
	})
	s, _ := get(t, gvkSecret, "tenant-replica", "wildcard-tls")
	if secretData(s, "tls.key") != "mine" || s.GetLabels()["cozystack.io/wildcard-replica-of"] != "" {
		t.Errorf("someone else's Secret was overwritten: %s", show(s))
	}
	if _, found := get(t, gvkClusterObject, "", "tenant-replica-wildcard-secret-data"); found {
		t.Error("a data Object was composed for someone else's Secret")
	}
	noKeyInRequests(t, renewed)
}

// TestWildcardReplicaRBAC: what the example's wildcard-replica role lets
// its subject do with Secrets, asked of the API server's authorizer: Secrets
// of the wildcard name in any namespace, nothing else (no other name, no
// list or watch, which --enable-watches would need). The role is bound to a
// probe account of its own: the provider's account also holds the system
// role Crossplane's RBAC manager binds to every provider, which with its
// defaults grants all Secrets (docs/design.md, "Tenants: the wildcard
// replica"), so this role is what is left where provider RBAC is managed by
// hand. The shipped binding names exactly the provider's account.
func TestWildcardReplicaRBAC(t *testing.T) {
	t.Parallel()
	var shipped *unstructured.Unstructured
	objs, err := decode(readFile("examples", "cluster", "provider-kubernetes-runtime.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "ClusterRoleBinding" && o.GetName() == "function-tenant-gateway:wildcard-replica" {
			shipped = o
		}
	}
	subjects, _, _ := unstructured.NestedSlice(shipped.Object, "subjects")
	if want := []any{map[string]any{"kind": "ServiceAccount", "name": "tenant-gateway-provider-kubernetes", "namespace": "crossplane-system"}}; fmt.Sprint(subjects) != fmt.Sprint(want) {
		t.Errorf("the shipped wildcard-replica binding names %v, want exactly the provider's account %v", subjects, want)
	}
	apply(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-wildcard-replica-probe}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: function-tenant-gateway:wildcard-replica}
subjects:
- {kind: ServiceAccount, namespace: e2e-replica-probe, name: probe}
`)
	provider := "system:serviceaccount:e2e-replica-probe:probe"
	cases := []struct {
		verb, ns, name string
		want           bool
	}{
		{"get", "tenant-root", "wildcard-tls", true},
		{"create", "tenant-acme", "wildcard-tls", true},
		{"patch", "tenant-acme", "wildcard-tls", true},
		{"delete", "tenant-acme", "wildcard-tls", true},
		{"get", "tenant-root", "other", false},
		{"patch", "tenant-acme", "other", false},
		{"create", "tenant-acme", "other", false},
		{"list", "tenant-root", "", false},
		{"watch", "", "", false},
	}
	// The authorizer sees a new binding within moments (its informer), so
	// the answers are awaited together.
	eventually(t, 30*time.Second, "the authorizer answers as the role says", func() (bool, string) {
		var wrong []string
		for _, c := range cases {
			r := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:               provider,
				Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:e2e-replica-probe", "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: c.verb, Resource: "secrets", Namespace: c.ns, Name: c.name},
			}}
			if err := k8s.Create(t.Context(), r); err != nil {
				t.Fatalf("cannot review access: %v", err)
			}
			if r.Status.Allowed != c.want {
				wrong = append(wrong, fmt.Sprintf("%s secret %q in %q: allowed %v, want %v (%s)", c.verb, c.name, c.ns, r.Status.Allowed, c.want, r.Status.Reason))
			}
		}
		return len(wrong) == 0, strings.Join(wrong, "; ")
	})
}

// secretData is one decoded value of a Secret's data.
func secretData(s *unstructured.Unstructured, k string) string {
	v, _, _ := unstructured.NestedString(s.Object, "data", k)
	b, _ := base64.StdEncoding.DecodeString(v)
	return string(b)
}

// noKeyInRequests fails when the key, raw or base64, appears in what
// Crossplane sends the function about a Tenant: the XR (observed and
// desired), and every cluster-scoped Object, composed resources being sent
// whole, spec and status. The claim is checked too, as the tenant reads it.
func noKeyInRequests(t *testing.T, key string) {
	t.Helper()
	var objs []unstructured.Unstructured
	objs = append(objs, list(t, gvkClusterObject, "")...)
	objs = append(objs, list(t, gvkXTenant, "")...)
	objs = append(objs, list(t, gvkTenant, "replica-root")...)
	if len(objs) < 3 {
		t.Fatalf("expected Objects, XTenants and the claim, found %d objects", len(objs))
	}
	// The key as it is, base64 as Secret data holds it, and each line of
	// its PEM body (JSON escapes the line breaks of the whole).
	needles := []string{key, base64.StdEncoding.EncodeToString([]byte(key))}
	for _, line := range strings.Split(key, "\n") {
		if len(line) >= 32 && !strings.HasPrefix(line, "-----") {
			needles = append(needles, line)
		}
	}
	for _, needle := range needles {
		for _, o := range objs {
			b, err := json.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), needle) {
				t.Errorf("%s %s holds the key (%q): %s", o.GetKind(), o.GetName(), needle, b)
			}
		}
	}
}
