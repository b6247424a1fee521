//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var gvkXRD = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "CompositeResourceDefinition"}

// confirmDeletion is the annotation deletion-guard-policy
// (examples/cluster/admission-policies.yaml) asks for, set to the object's
// own name.
const confirmDeletion = "gateway.cozystack.io/confirm-deletion"

// TestDeletionGuard: the administrator who deletes the Configuration or
// either XRD on this live platform is refused, with the message saying what
// it would delete and how to confirm; once the object carries the
// confirmation, the same deletion is admitted. Every deletion is a
// server-side dry run, so admission judges it as it would a real one and
// nothing is deleted; the confirmation is taken back when the test ends.
func TestDeletionGuard(t *testing.T) {
	t.Parallel()
	targets := []struct {
		gvk  schema.GroupVersionKind
		name string
	}{
		{gvkConfiguration, "cozystack-configuration-tenant-gateway"},
		{gvkXRD, "tenantgateways.gateway.cozystack.io"},
		{gvkXRD, "xtenants.apps.cozystack.io"},
	}
	deleteDry := func(gvk schema.GroupVersionKind, name string) error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetName(name)
		return k8s.Delete(t.Context(), u, client.DryRunAll)
	}
	for _, o := range targets {
		if _, ok := get(t, o.gvk, "", o.name); !ok {
			t.Fatalf("%s %s does not exist", o.gvk.Kind, o.name)
		}
		// Refused, with the message naming the confirmation. The policy
		// is applied with the others by TestMain; the API server may take
		// a moment to load it.
		var err error
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
			if err = deleteDry(o.gvk, o.name); kerrors.IsForbidden(err) {
				break
			}
		}
		if !kerrors.IsForbidden(err) || !strings.Contains(err.Error(), "deletion-guard-policy") || !strings.Contains(err.Error(), "annotate the object with "+confirmDeletion+" set to its own name") {
			t.Errorf("deleting %s %s: want refused by deletion-guard-policy with how to confirm, got %v", o.gvk.Kind, o.name, err)
		}
		// A confirmation that names another object confirms nothing.
		annotate(t, o.gvk, o.name, "true")
		if err := deleteDry(o.gvk, o.name); !kerrors.IsForbidden(err) {
			t.Errorf("deleting %s %s confirmed with \"true\": want refused, got %v", o.gvk.Kind, o.name, err)
		}
		// Confirmed: admitted (dry run, so it stays). Crossplane's package
		// manager rewrites an installed XRD's annotations whenever its
		// revision establishes it again, which may drop the confirmation
		// between the two requests: confirm again then.
		var confirmed error
		for range 3 {
			annotate(t, o.gvk, o.name, o.name)
			if confirmed = deleteDry(o.gvk, o.name); confirmed == nil {
				break
			}
		}
		if confirmed != nil {
			t.Errorf("deleting %s %s after confirming it: want admitted, got %v", o.gvk.Kind, o.name, confirmed)
		}
		annotate(t, o.gvk, o.name, "")
		if _, ok := get(t, o.gvk, "", o.name); !ok {
			t.Errorf("%s %s is gone after a dry-run deletion", o.gvk.Kind, o.name)
		}
	}
}
