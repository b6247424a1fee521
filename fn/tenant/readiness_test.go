package tenant

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// TestReadiness: which composed resources Crossplane is told are ready,
// from what it observed of them; the XR is Ready only once all are.
func TestReadiness(t *testing.T) {
	rootLabels := map[string]string{kube.LabelNamespaceGateway: "tenant-root", kube.LabelNamespaceHost: "example.org"}
	bob := Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: platform()}
	with := func(in Input, f func(*Input)) Input { f(&in); return in }
	conds := func(c map[string]string) *kube.ObservedResource { return &kube.ObservedResource{Conditions: c} }
	readySynced := conds(map[string]string{"Ready": "True", "Synced": "True"})
	wildcard := platform()
	wildcard.WildcardSecret = "wildcard-tls"
	cases := map[string]struct {
		reason string
		in     Input
		want   map[string]bool
	}{
		"NothingObserved": {
			reason: "a resource Crossplane has not observed yet is not ready",
			in:     bob,
			want:   map[string]bool{KeyNamespace: false, KeyTenantGateway: false},
		},
		"Observed": {
			reason: "a Namespace is ready once it exists (it has no conditions); the TenantGateway's Object once Ready and Synced",
			in: with(bob, func(in *Input) {
				in.Observed = map[string]*kube.ObservedResource{KeyNamespace: conds(nil), KeyTenantGateway: readySynced}
			}),
			want: map[string]bool{KeyNamespace: true, KeyTenantGateway: true},
		},
		"ReadyNotSynced": {
			reason: "an Object that is Ready but failed its last sync is not ready: its desired state has not reached the object",
			in: with(bob, func(in *Input) {
				in.Observed = map[string]*kube.ObservedResource{KeyTenantGateway: conds(map[string]string{"Ready": "True", "Synced": "False"})}
			}),
			want: map[string]bool{KeyNamespace: false, KeyTenantGateway: false},
		},
		"SyncedNotReady": {
			reason: "an Object that is Synced but not Ready is not ready",
			in: with(bob, func(in *Input) {
				in.Observed = map[string]*kube.ObservedResource{KeyTenantGateway: conds(map[string]string{"Ready": "False", "Synced": "True"})}
			}),
			want: map[string]bool{KeyNamespace: false, KeyTenantGateway: false},
		},
		"RootNamespaceObject": {
			reason: "the root tenant's namespace is patched through an Object, ready once Ready and Synced like every Object",
			in: Input{Name: RootTenant, Parent: "tenant-root", Platform: platform(), Observed: map[string]*kube.ObservedResource{
				KeyNamespace: conds(map[string]string{"Ready": "True", "Synced": "False"}),
			}},
			want: map[string]bool{KeyNamespace: false},
		},
		"ReplicaHolderObservedTheSecret": {
			reason: "the replica holder is ready once it has observed the Secret, whatever its conditions say; the data Object is an Object",
			in: with(bob, func(in *Input) {
				in.Platform = wildcard
				in.WildcardSecret = &ObservedSecret{Labels: map[string]string{LabelReplicaOf: "tenant-root"}}
				in.Observed = map[string]*kube.ObservedResource{KeyReplica: conds(map[string]string{"Ready": "False"}), KeyReplicaData: readySynced}
			}),
			want: map[string]bool{KeyNamespace: false, KeyTenantGateway: false, KeyReplica: true, KeyReplicaData: true},
		},
		"ReplicaHolderNotYet": {
			reason: "until it has observed the Secret the holder is not ready, even Ready and Synced",
			in: with(bob, func(in *Input) {
				in.Platform = wildcard
				in.Observed = map[string]*kube.ObservedResource{KeyReplica: readySynced}
			}),
			want: map[string]bool{KeyNamespace: false, KeyTenantGateway: false, KeyReplica: false},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Derive(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.Ready); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
