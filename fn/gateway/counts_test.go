package gateway

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// TestStateCounts checks the counts the metrics report against the status
// lists while those are whole, and against every claim and child apex once
// the lists are cut.
func TestStateCounts(t *testing.T) {
	nested := platform()
	for i := range 160 {
		nested = append(nested, labelled(fmt.Sprintf("tenant-alice-a%03d", i), fmt.Sprintf("a%03d.alice.example.org", i)))
	}
	cases := map[string]struct {
		in              Input
		cut             bool
		wantHostnames   map[v1alpha1.HostnameState]int
		wantChildApexes map[v1alpha1.ChildApexState]int
	}{
		"ListenerBudgetConflictOutsideApex": {
			// 102 hostnames want a listener of their own, 63 get one
			// beside http; the dashboard loses www to tenant-root.
			in: Input{Spec: http01Spec, Namespaces: platform(), Routes: []Route{
				routeTo("tenant-alice", "flood", hosts(100, "aa%03d.alice.example.org")...),
				routeTo("tenant-bob", "shop", "shop.bob.example.org", "shop.example.net"),
				routeTo("tenant-root", "www", "www.example.org"),
				routeTo("cozy-dashboard", "www", "www.example.org"),
			}},
			wantHostnames: map[v1alpha1.HostnameState]int{
				v1alpha1.HostnameListening: 63, v1alpha1.HostnameOverListenerLimit: 39,
				v1alpha1.HostnameConflict: 1, v1alpha1.HostnameOutsideApex: 1,
			},
			wantChildApexes: map[v1alpha1.ChildApexState]int{v1alpha1.ChildApexListening: 2},
		},
		"HostnamesCut": {
			// 1,100 claims, served by the wildcard: status.hostnames keeps
			// 1,000.
			in:  Input{Spec: dns01Spec, Namespaces: platform(), Routes: []Route{routeTo("tenant-bob", "many", hosts(1100, "h%04d.bob.example.org")...)}},
			cut: true,
			wantHostnames: map[v1alpha1.HostnameState]int{
				v1alpha1.HostnameCovered: 1100,
			},
			// alice routes nothing: her zone is idle.
			wantChildApexes: map[v1alpha1.ChildApexState]int{v1alpha1.ChildApexListening: 1, v1alpha1.ChildApexIdle: 1},
		},
		"ChildApexesCut": {
			// 162 child apexes, 49 on the certificate beside the apex's
			// names: status.childApexes keeps 100 of the others.
			// Every child routes one name (an idle zone holds no name);
			// alice routes none.
			in:            Input{Spec: dns01Spec, Namespaces: nested, Routes: namesOfEach(nested)},
			cut:           true,
			wantHostnames: map[v1alpha1.HostnameState]int{v1alpha1.HostnameCovered: 49, v1alpha1.HostnameOverCertificateLimit: 161 - 49},
			wantChildApexes: map[v1alpha1.ChildApexState]int{
				v1alpha1.ChildApexListening: 49, v1alpha1.ChildApexOverCertificateLimit: 161 - 49, v1alpha1.ChildApexIdle: 1,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := run(t, tc.in)
			if diff := cmp.Diff(tc.wantHostnames, out.HostnameStates); diff != "" {
				t.Errorf("hostnames by state: -want, +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantChildApexes, out.ChildApexStates); diff != "" {
				t.Errorf("child apexes by state: -want, +got:\n%s", diff)
			}
			listed := countByState(out.Hostnames, func(h v1alpha1.HostnameStatus) v1alpha1.HostnameState { return h.State })
			children := countByState(out.ChildApexes, func(c v1alpha1.ChildApexStatus) v1alpha1.ChildApexState { return c.State })
			whole := cmp.Equal(listed, out.HostnameStates) && cmp.Equal(children, out.ChildApexStates)
			if whole == tc.cut {
				t.Errorf("the status lists are cut: %t, want %t (status %v and %v; counts %v and %v)", !whole, tc.cut, listed, children, out.HostnameStates, out.ChildApexStates)
			}
		})
	}
}

// namesOfEach is one route per child namespace (not alice), with one name
// in its zone.
func namesOfEach(nss []Namespace) []Route {
	var out []Route
	for _, n := range nss {
		if h := n.Labels[kube.LabelNamespaceHost]; h != "" && h != "example.org" && n.Name != "tenant-alice" {
			out = append(out, routeTo(n.Name, "r", "www."+h))
		}
	}
	return out
}
