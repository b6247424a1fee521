package policies

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHostDelegationAtEveryDepth: an administrator may give an owning
// tenant its own apex (customer1.example) at any nesting depth, as for a
// direct child of tenant-root, and so may the platform's accounts; the
// attacker, a tenant's administrator with full rights on Tenants in its
// namespaces, may not set or change spec.host at any depth, and keeps one
// it was given (the Tenant derivation, fn/tenant, refuses a host outside
// the parent's zone that is not an owning tenant's apex outside the
// platform's zone, whatever admission does).
func TestHostDelegationAtEveryDepth(t *testing.T) {
	set, err := Load(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	params := setting(t, nil)
	tenant := func(host string) map[string]any {
		spec := map[string]any{"gateway": true}
		if host != "" {
			spec["host"] = host
		}
		return map[string]any{"spec": spec}
	}
	const l3 = "tenant-host-policy: tenant.spec.host can only be set by cluster administrators and the platform's service accounts; leave it empty to derive the host from the parent tenant"
	admin := func(op, ns string) map[string]any {
		return req(op, ns, "kubernetes-admin", "kubeadm:cluster-admins", "system:authenticated")
	}
	attacker := func(op, ns string) map[string]any {
		return req(op, ns, "alice@example.com", "tenant-alice-admins", "system:authenticated")
	}
	flux := func(op, ns string) map[string]any {
		u, g := sa("cozy-fluxcd", "helm-controller")
		return req(op, ns, u, g...)
	}
	cases := map[string]delegationCase{}
	// The claim of a tenant at depth d lives in its parent's namespace.
	for _, parent := range []string{"tenant-root", "tenant-alice", "tenant-alice-x", "tenant-alice-x-y"} {
		cases[parent+"/AdminGivesOwnApex"] = delegationCase{admin("CREATE", parent), nil, tenant("customer1.example"), ""}
		cases[parent+"/PlatformGivesOwnApex"] = delegationCase{flux("CREATE", parent), nil, tenant("customer1.example"), ""}
		cases[parent+"/AttackerSetsApex"] = delegationCase{attacker("CREATE", parent), nil, tenant("customer1.example"), l3}
		cases[parent+"/AttackerChangesApex"] = delegationCase{attacker("UPDATE", parent), tenant("customer1.example"), tenant("customer2.example"), l3}
		cases[parent+"/AttackerKeepsApex"] = delegationCase{attacker("UPDATE", parent), tenant("customer1.example"), tenant("customer1.example"), ""}
		cases[parent+"/AttackerDerives"] = delegationCase{attacker("CREATE", parent), nil, tenant(""), ""}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			in := map[string]any{"object": c.object, "oldObject": c.old, "request": c.request, "params": params}
			got, err := set.Review("apps.cozystack.io", "v1alpha1", "tenants", in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}

// A delegationCase is a write of a Tenant by a caller, over an old object
// (nil on CREATE), and the refusal expected ("" admitted).
type delegationCase struct {
	request     map[string]any
	old, object map[string]any
	want        string
}
