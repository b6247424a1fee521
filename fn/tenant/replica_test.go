package tenant

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// replicaView is what an operator notices of a replica Object: its name,
// what provider-kubernetes may do, the Secret it writes, where its data
// comes from.
type replicaView struct {
	Key, Object string
	Policies    []string
	Secret      string
	Labels      map[string]string
	Type        string
	Data        map[string]string
	Finalizers  []string
	From        []string
}

func replicas(t *testing.T, out *Output) []replicaView {
	t.Helper()
	var got []replicaView
	for _, r := range out.Resources {
		if r.Key != KeyReplica && r.Key != KeyReplicaData {
			continue
		}
		raw, err := json.Marshal(r.Object)
		if err != nil {
			t.Fatal(err)
		}
		var o struct {
			Metadata struct {
				Name       string   `json:"name"`
				Finalizers []string `json:"finalizers"`
			} `json:"metadata"`
			Spec struct {
				ManagementPolicies []string `json:"managementPolicies"`
				References         []struct {
					PatchesFrom struct{ APIVersion, Kind, Namespace, Name, FieldPath string } `json:"patchesFrom"`
					ToFieldPath string                                                        `json:"toFieldPath"`
				} `json:"references"`
				ForProvider struct {
					Manifest struct {
						Metadata struct {
							Name, Namespace string
							Labels          map[string]string
						} `json:"metadata"`
						Type string            `json:"type"`
						Data map[string]string `json:"data"`
					} `json:"manifest"`
				} `json:"forProvider"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			t.Fatal(err)
		}
		m := o.Spec.ForProvider.Manifest
		v := replicaView{
			Key: r.Key, Object: o.Metadata.Name, Policies: o.Spec.ManagementPolicies, Finalizers: o.Metadata.Finalizers,
			Secret: m.Metadata.Namespace + "/" + m.Metadata.Name, Labels: m.Metadata.Labels, Type: m.Type, Data: m.Data,
		}
		for _, ref := range o.Spec.References {
			p := ref.PatchesFrom
			v.From = append(v.From, fmt.Sprintf("%s %s %s/%s %s -> %s", p.APIVersion, p.Kind, p.Namespace, p.Name, p.FieldPath, ref.ToFieldPath))
		}
		got = append(got, v)
	}
	return got
}

func TestReplica(t *testing.T) {
	rootLabels := map[string]string{kube.LabelNamespaceGateway: "tenant-root", kube.LabelNamespaceHost: "example.org"}
	aliceLabels := map[string]string{kube.LabelNamespaceGateway: "tenant-alice", kube.LabelNamespaceHost: "alice.example.org"}
	wildcard := func(f func(*Platform)) Platform {
		p := platform()
		p.WildcardSecret = "wildcard-tls"
		if f != nil {
			f(&p)
		}
		return p
	}
	marked := &ObservedSecret{Labels: map[string]string{LabelReplicaOf: "tenant-root"}}
	mark := map[string]string{LabelReplicaOf: "tenant-root"}
	empty := map[string]string{"tls.crt": "", "tls.key": ""}
	create := []string{"Observe", "Create"}
	holder := func(ns string, policies []string) replicaView {
		return replicaView{Key: KeyReplica, Object: ns + "-wildcard-secret", Policies: policies, Secret: ns + "/wildcard-tls", Labels: mark, Type: "kubernetes.io/tls", Data: empty}
	}
	data := func(ns string) replicaView {
		return replicaView{
			Key: KeyReplicaData, Object: ns + "-wildcard-secret-data", Policies: []string{"Observe", "Update"}, Secret: ns + "/wildcard-tls",
			Labels: mark, Type: "kubernetes.io/tls", Finalizers: []string{"finalizer.managedresource.crossplane.io"},
			From: []string{"v1 Secret tenant-root/wildcard-tls data -> data"},
		}
	}
	foreign := "Secret tenant-acme/wildcard-tls exists without the label cozystack.io/wildcard-replica-of=tenant-root, so it is not the wildcard replica and is left as it is: the tenant's HTTPS listeners use it; delete it to get the replica of tenant-root/wildcard-tls"
	acme := appsv1alpha1.TenantSpec{Gateway: yes}
	cases := map[string]struct {
		reason   string
		in       Input
		want     []replicaView
		warnings []string
	}{
		"NotObservedYet": {
			reason: "existingSecret, nothing observed: only the holder, which may create the Secret (empty, marked) but neither update nor delete it; no data yet",
			in:     Input{Name: "acme", Parent: "tenant-root", Spec: acme, ParentLabels: rootLabels, Platform: wildcard(nil)},
			want:   []replicaView{holder("tenant-acme", create)},
		},
		"ObservedReplica": {
			reason: "the holder observed the marked Secret: it may delete it now, and the data Object fills it from the operator's Secret, carrying the provider's finalizer from the start",
			in:     Input{Name: "acme", Parent: "tenant-root", Spec: acme, ParentLabels: rootLabels, Platform: wildcard(nil), WildcardSecret: marked},
			want:   []replicaView{holder("tenant-acme", []string{"Observe", "Create", "Delete"}), data("tenant-acme")},
		},
		"SomeoneElsesSecret": {
			reason:   "a Secret of that name without the mark is not overwritten nor deleted: no data Object, the holder can neither update nor delete; the tenant is told",
			in:       Input{Name: "acme", Parent: "tenant-root", Spec: acme, ParentLabels: rootLabels, Platform: wildcard(nil), WildcardSecret: &ObservedSecret{Labels: map[string]string{"app": "mine"}}},
			want:     []replicaView{holder("tenant-acme", create)},
			warnings: []string{foreign},
		},
		"MarkOfAnotherSource": {
			reason: "the mark names the source namespace: a replica of another source (the publishing tenant moved) is not this one's",
			in: Input{Name: "acme", Parent: "tenant-root", Spec: acme, ParentLabels: rootLabels, Platform: wildcard(nil),
				WildcardSecret: &ObservedSecret{Labels: map[string]string{LabelReplicaOf: "tenant-old"}}},
			want:     []replicaView{holder("tenant-acme", create)},
			warnings: []string{foreign},
		},
		"Publishing": {
			reason: "the publishing tenant's namespace holds the operator's Secret itself: no replica",
			in: Input{Name: "root", Parent: "tenant-root", Spec: acme, Platform: wildcard(nil), WildcardSecret: marked,
				GatewayClasses: []string{"cilium", "edge-tunnel", "envoy"}},
		},
		"EdgeClass": {
			reason: "a tenant on an edge class terminates no TLS: the replica leaves desired state (Crossplane deletes the Objects; the holder, observed as the replica, deletes the Secret)",
			in: Input{Name: "acme", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes, GatewayClass: "edge-tunnel"}, ParentLabels: rootLabels,
				Platform: wildcard(nil), WildcardSecret: marked},
		},
		"SettingCleared": {
			reason: "wildcardSecretName cleared: the solver's mode, no replica",
			in:     Input{Name: "acme", Parent: "tenant-root", Spec: acme, ParentLabels: rootLabels, Platform: platform(), WildcardSecret: marked},
		},
		"NoGateway": {
			reason: "a tenant under another's Gateway has no listeners of its own: no replica",
			in:     Input{Name: "bob", Parent: "tenant-alice", ParentLabels: aliceLabels, Platform: wildcard(nil)},
		},
		"OtherPublishingNamespace": {
			reason: "the source is the publishing tenant's namespace from the settings, and that namespace gets no replica",
			in: Input{Name: "acme", Parent: "cozy-public", Spec: acme, ParentLabels: rootLabels,
				Platform: wildcard(func(p *Platform) { p.IngressName = "cozy-public" }), WildcardSecret: &ObservedSecret{Labels: map[string]string{LabelReplicaOf: "cozy-public"}}},
			want: []replicaView{
				{Key: KeyReplica, Object: "tenant-acme-wildcard-secret", Policies: []string{"Observe", "Create", "Delete"}, Secret: "tenant-acme/wildcard-tls",
					Labels: map[string]string{LabelReplicaOf: "cozy-public"}, Type: "kubernetes.io/tls", Data: empty},
				{Key: KeyReplicaData, Object: "tenant-acme-wildcard-secret-data", Policies: []string{"Observe", "Update"}, Secret: "tenant-acme/wildcard-tls",
					Labels: map[string]string{LabelReplicaOf: "cozy-public"}, Type: "kubernetes.io/tls", Finalizers: []string{"finalizer.managedresource.crossplane.io"},
					From: []string{"v1 Secret cozy-public/wildcard-tls data -> data"}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Derive(tc.in)
			if err != nil {
				t.Fatalf("%s\nDerive: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, replicas(t, out)); diff != "" {
				t.Errorf("%s\nreplica Objects (-want +got):\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.warnings, out.Warnings); diff != "" {
				t.Errorf("%s\nwarnings (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestReplicaAttacks: a tenant with full rights in its namespaces creates
// Tenant claims there (names, hosts, classes of its choosing) and Secrets of
// any name and labels. It must never get the operator's Secret into a
// namespace that is not one of its own Gateway-owning tenants', nor make the
// provider write a Secret in another tenant's namespace, nor pick the source.
func TestReplicaAttacks(t *testing.T) {
	p := platform()
	p.WildcardSecret = "wildcard-tls"
	aliceLabels := map[string]string{kube.LabelNamespaceGateway: "tenant-alice", kube.LabelNamespaceHost: "alice.example.org"}
	forged := &ObservedSecret{Labels: map[string]string{LabelReplicaOf: "tenant-root"}}
	cases := map[string]struct {
		reason string
		in     Input
		// want is where the replica goes ("" none).
		want string
	}{
		"NestedNamedRoot": {
			reason: "a nested Tenant named root is not the publishing tenant: its replica lands in its own namespace tenant-alice-root, not in tenant-root",
			in:     Input{Name: "root", Parent: "tenant-alice", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: aliceLabels, Platform: p, WildcardSecret: forged},
			want:   "tenant-alice-root",
		},
		"NestedNamedLikeANeighbour": {
			reason: "names cannot hold '-': a nested Tenant cannot derive another tenant's namespace (tenant-alice + bob is tenant-alice-bob, never tenant-bob)",
			in:     Input{Name: "alice-bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, Platform: p},
		},
		"HostOfTheSource": {
			reason: "spec.host and class are the tenant's to set (where allowed); neither moves the replica or its source",
			in: Input{Name: "x", Parent: "tenant-alice", Spec: appsv1alpha1.TenantSpec{Gateway: yes, Host: "tenant-root.alice.example.org", GatewayClass: "envoy"},
				ParentLabels: aliceLabels, Platform: p, WildcardSecret: forged},
			want: "tenant-alice-x",
		},
		"ForgedMark": {
			reason: "a tenant that marks a Secret of its own gets it filled, in its own namespace only: the key it is given there anyway",
			in:     Input{Name: "acme", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: map[string]string{kube.LabelNamespaceHost: "example.org"}, Platform: p, WildcardSecret: forged},
			want:   "tenant-acme",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Derive(tc.in)
			got := map[string]bool{}
			if err == nil {
				for _, v := range replicas(t, out) {
					ns := v.Secret[:len(v.Secret)-len("/wildcard-tls")]
					got[ns] = true
					if ns != out.Status.Namespace {
						t.Errorf("%s\nreplica in %s, the tenant's namespace is %s", tc.reason, ns, out.Status.Namespace)
					}
					for _, f := range v.From {
						if f != "v1 Secret tenant-root/wildcard-tls data -> data" {
							t.Errorf("%s\nsource %q, want the platform's tenant-root/wildcard-tls", tc.reason, f)
						}
					}
				}
			}
			want := map[string]bool{}
			if tc.want != "" {
				want[tc.want] = true
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nreplica namespaces (-want +got):\n%s (refusal: %v)", tc.reason, diff, err)
			}
		})
	}
}

// TestObjectNamesUnique: a tenant names its nested tenants after the
// suffixes of the cluster-scoped Object names (wildcard, secret, data,
// tenantgateway, ...), nested three deep, all owning a Gateway with a quota
// and an observed replica, hoping that <ns>-wildcard-secret of one tenant
// is <ns2>-wildcard-secret-data or another kind of another: no two Objects of
// all those tenants share a name, since tenant names hold no '-' and no
// Object kind ends with '-' and another kind.
func TestObjectNamesUnique(t *testing.T) {
	p := platform()
	p.WildcardSecret = "wildcard-tls"
	names := []string{"a", "wildcard", "secret", "data", "tenantgateway", "resourcequota", "namespace"}
	spec := appsv1alpha1.TenantSpec{Gateway: yes, ResourceQuotas: map[string]resource.Quantity{"pods": resource.MustParse("1")}}
	marked := &ObservedSecret{Labels: map[string]string{LabelReplicaOf: "tenant-root"}}
	owner := map[string]string{}
	parents := []string{"tenant-root"}
	for depth := 0; depth < 3; depth++ {
		var next []string
		for _, parent := range parents {
			for _, name := range names {
				labels := map[string]string{kube.LabelNamespaceHost: "example.org"}
				out, err := Derive(Input{Name: name, Parent: parent, Spec: spec, ParentLabels: labels, Platform: p, WildcardSecret: marked})
				if err != nil {
					t.Fatalf("Tenant %s/%s: %v", parent, name, err)
				}
				for _, r := range out.Resources {
					if r.Key == KeyNamespace {
						continue
					}
					n := r.Object.GetName()
					if prev, ok := owner[n]; ok {
						t.Errorf("Object %s of Tenant %s/%s (%s) is also %s's", n, parent, name, r.Key, prev)
					}
					owner[n] = parent + "/" + name + " (" + r.Key + ")"
				}
				next = append(next, out.Status.Namespace)
			}
		}
		parents = next
	}
	if want := 4 * (7 + 49 + 343); len(owner) != want {
		t.Errorf("%d Objects, want %d (TenantGateway, quota, holder and data of each tenant)", len(owner), want)
	}
}
