package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// TestTenancy: who may use tenant-root's Gateway and for which hostnames
// (see "Who may attach" in docs/design.md), read from the namespaces as the
// edge observes them.
func TestTenancy(t *testing.T) {
	in := &Input{
		Namespace: "tenant-root",
		Spec:      v1alpha1.TenantGatewaySpec{Apex: "example.org", AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-foreign", "cozy-dashboard"}},
		Namespaces: []Namespace{
			labelled("tenant-root", "example.org"),
			labelled("tenant-alice", "alice.example.org"),
			labelled("tenant-alice-dev", "dev.alice.example.org"),
			labelled("tenant-apex", "example.org"),
			labelled("tenant-nohost", ""),
			{Name: "tenant-other", Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-x", kube.LabelNamespaceHost: "other.example.org"}},
		},
		NamedNamespaces: map[string]*Namespace{
			"tenant-root":    {Name: "tenant-root", Labels: map[string]string{kube.LabelNamespaceHost: "example.org"}},
			"cozy-dashboard": {Name: "cozy-dashboard"},
			"cozy-foreign":   {Name: "cozy-foreign", Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-x"}},
		},
	}
	tn := newTenancy(in)

	type admission struct {
		Admitted   bool
		Delegation string
		Turn       int
		Branch     string
	}
	got := map[string]admission{}
	for _, ns := range []string{"tenant-root", "cozy-dashboard", "cozy-foreign", "tenant-alice", "tenant-alice-dev", "tenant-apex", "tenant-nohost", "tenant-other", "tenant-unknown"} {
		d, _ := tn.delegation(ns)
		turn, branch := tn.turn(ns)
		got[ns] = admission{Admitted: tn.admitted(ns), Delegation: d, Turn: turn, Branch: branch}
	}
	want := map[string]admission{
		// The owner and the attached namespace without another owner's
		// label: publishers, delegated the apex, each its own turn.
		"tenant-root":    {Admitted: true, Delegation: "example.org", Turn: 0},
		"cozy-dashboard": {Admitted: true, Delegation: "example.org", Turn: 1, Branch: "cozy-dashboard"},
		// Attached, but another Gateway's owner labelled it: not admitted.
		"cozy-foreign": {Delegation: "", Turn: 2, Branch: "=cozy-foreign"},
		// Labelled namespaces: their host label, one turn per branch of the
		// delegation tree however many namespaces it has.
		"tenant-alice":     {Admitted: true, Delegation: "alice.example.org", Turn: 2, Branch: "alice.example.org"},
		"tenant-alice-dev": {Admitted: true, Delegation: "dev.alice.example.org", Turn: 2, Branch: "alice.example.org"},
		"tenant-apex":      {Admitted: true, Delegation: "example.org", Turn: 2, Branch: "=tenant-apex"},
		// Labelled without a host label and not attached: delegated nothing.
		"tenant-nohost": {Admitted: true, Turn: 2, Branch: "=tenant-nohost"},
		// Labelled for another Gateway, or unknown: nothing.
		"tenant-other":   {Turn: 2, Branch: "=tenant-other"},
		"tenant-unknown": {Turn: 2, Branch: "=tenant-unknown"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("namespace → admission: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tenant-root", "cozy-dashboard"}, tn.publishers); diff != "" {
		t.Errorf("publishers, the owner first: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cozy-foreign"}, tn.foreign); diff != "" {
		t.Errorf("foreign attached namespaces: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cozy-dashboard", "tenant-apex", "tenant-root"}, tn.apexZone); diff != "" {
		t.Errorf("apex zone (the apex listeners admit them): -want, +got:\n%s", diff)
	}
}
