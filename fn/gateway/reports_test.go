package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kobjv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/object/v1alpha1"
)

// reported is what a tenant reads: each report's ConfigMap by
// "<namespace>/<name>", with its data; the Object that writes it must sit
// in the owner's namespace under its own key.
func reported(t *testing.T, out *Output) map[string]map[string]string {
	t.Helper()
	got := map[string]map[string]string{}
	for _, r := range out.Resources {
		if !isReportKey(r.Key) {
			continue
		}
		o, ok := r.Object.(*kobjv1alpha1.Object)
		if !ok {
			t.Fatalf("%s is a %T, want a provider-kubernetes Object", r.Key, r.Object)
		}
		var cm corev1.ConfigMap
		if err := json.Unmarshal(manifestBytes(t, o), &cm); err != nil {
			t.Fatal(err)
		}
		if o.Namespace != "tenant-root" || r.Key != ReportKey(cm.Namespace) || o.Name != ReportObjectName("cozystack", cm.Namespace) {
			t.Errorf("report %s: Object %s/%s writes ConfigMap %s/%s", r.Key, o.Namespace, o.Name, cm.Namespace, cm.Name)
		}
		data := map[string]string{}
		for k, v := range cm.Data {
			if k != KeyReportSummary {
				data[k] = v
			}
		}
		got[cm.Namespace+"/"+cm.Name] = data
	}
	return got
}

func TestRouteReports(t *testing.T) {
	cases := map[string]struct {
		reason string
		routes []Route
		want   map[string]map[string]string
	}{
		"NothingRefused": {
			reason: "A namespace whose routes are all served gets no report.",
			routes: []Route{routeTo("tenant-alice", "www", "www.alice.example.org")},
			want:   map[string]map[string]string{},
		},
		"OwnerNotReported": {
			reason: "The owner's administrators read the TenantGateway: no report for its namespace.",
			routes: []Route{routeTo("tenant-root", "www", "www.elsewhere.org")},
			want:   map[string]map[string]string{},
		},
		"EachNamespaceItsOwnRoutes": {
			reason: "alice and bob each read, in their own namespace, only their own routes not served, each hostname with its state and why; a served route of theirs is not listed.",
			routes: []Route{
				routeTo("tenant-alice", "www", "www.alice.example.org"),
				routeTo("tenant-alice", "steal", "dashboard.example.org", "shop.alice.example.org"),
				routeTo("tenant-bob", "evil", "www.alice.example.org"),
			},
			want: map[string]map[string]string{
				"tenant-alice/cozystack-route-status": {
					"HTTPRoute.steal": "dashboard.example.org: NotDelegated: dashboard.example.org is outside what namespace tenant-alice was delegated: alice.example.org and its subdomains (its namespace.cozystack.io/host label)\n" +
						"shop.alice.example.org: Listening: listener " + HostListenerName("shop.alice.example.org"),
				},
				"tenant-bob/cozystack-route-status": {
					"HTTPRoute.evil": "www.alice.example.org: NotDelegated: www.alice.example.org is outside what namespace tenant-bob was delegated: bob.example.org and its subdomains (its namespace.cozystack.io/host label)",
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := attack(t, Input{Spec: http01Spec, Namespaces: platform(), Routes: tc.routes})
			if diff := cmp.Diff(tc.want, reported(t, out)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRouteReportsBounded: the attacker makes many nested tenants, each
// with a refused route with many long hostnames; reports stop at
// MaxRouteReports namespaces (namespace order), each within its size
// bound and saying how much it left out.
func TestRouteReportsBounded(t *testing.T) {
	nss := platform()
	var routes []Route
	for i := range MaxRouteReports + 5 {
		ns := fmt.Sprintf("tenant-alice-n%03d", i)
		nss = append(nss, labelled(ns, fmt.Sprintf("n%03d.alice.example.org", i)))
		for j := range 40 {
			var hosts []string
			for k := range 16 {
				hosts = append(hosts, fmt.Sprintf("%s.x%02d.y%02d.example.net", strings.Repeat("a", 60), j, k))
			}
			routes = append(routes, routeTo(ns, fmt.Sprintf("r%02d", j), hosts...))
		}
	}
	out := attack(t, Input{Spec: http01Spec, Namespaces: nss, Routes: routes})
	n, biggest, total := 0, 0, 0
	var summary string
	for _, r := range out.Resources {
		if !isReportKey(r.Key) {
			continue
		}
		n++
		o := r.Object.(*kobjv1alpha1.Object)
		b := manifestBytes(t, o)
		biggest = max(biggest, len(b))
		total += len(b)
		var cm corev1.ConfigMap
		if err := json.Unmarshal(b, &cm); err != nil {
			t.Fatal(err)
		}
		summary = cm.Data[KeyReportSummary]
	}
	if n != MaxRouteReports || out.ReportsLeftOut != 5 {
		t.Errorf("%d reports, %d left out; want %d and 5", n, out.ReportsLeftOut, MaxRouteReports)
	}
	if biggest > maxReportBytes+4096 {
		t.Errorf("a report's manifest is %d bytes, over its bound %d (and the summary)", biggest, maxReportBytes)
	}
	// All reports together stay within a third of the 1 MiB the function's
	// response is held to (test/bench's TestResponseBounded), summaries
	// included.
	if total > 340<<10 {
		t.Errorf("the reports' manifests are %d bytes together, over 340 KiB", total)
	}
	if !strings.Contains(summary, "more routes are left out of this report (size limit)") {
		t.Errorf("a cut report's summary does not say so: %q", summary)
	}
}

// TestAttackReportsCrowdedOutByName: alice makes more nested tenants than
// there are report places, named to sort before every other tenant's
// namespace, each with a refused route, so that bob and carol (other
// branches) get no report and cannot read why their routes are refused.
// What must hold: every branch with a refused route gets a report; alice's
// branch gets the places nobody else needs, and the count left out is
// what her branch asked beyond them.
func TestAttackReportsCrowdedOutByName(t *testing.T) {
	cases := map[string]struct {
		nested   int
		wantAll  int
		wantLeft int
	}{
		"FewerThanThePlaces":   {nested: 10, wantAll: 13, wantLeft: 0},
		"OneMoreThanThePlaces": {nested: MaxRouteReports, wantAll: MaxRouteReports, wantLeft: 3},
		"ManyMore":             {nested: 3 * MaxRouteReports, wantAll: MaxRouteReports, wantLeft: 2*MaxRouteReports + 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			nss := append(platform(), labelled("tenant-carol", "carol.example.org"))
			routes := []Route{
				routeTo("tenant-bob", "steal", "www.carol.example.org"),
				routeTo("tenant-carol", "steal", "www.bob.example.org"),
				routeTo("tenant-alice", "steal", "www.bob.example.org"),
			}
			for i := range tc.nested {
				ns := fmt.Sprintf("tenant-alice-a%03d", i)
				nss = append(nss, labelled(ns, fmt.Sprintf("a%03d.alice.example.org", i)))
				routes = append(routes, routeTo(ns, "steal", "www.bob.example.org"))
			}
			out := attack(t, Input{Spec: http01Spec, Namespaces: nss, Routes: routes})
			got := reported(t, out)
			byOthers := map[string]bool{}
			for k := range got {
				if ns, _, _ := strings.Cut(k, "/"); !strings.HasPrefix(ns, "tenant-alice") {
					byOthers[ns] = true
				}
			}
			type counts struct {
				Others    map[string]bool
				All, Left int
			}
			want := counts{Others: map[string]bool{"tenant-bob": true, "tenant-carol": true}, All: tc.wantAll, Left: tc.wantLeft}
			if diff := cmp.Diff(want, counts{Others: byOthers, All: len(got), Left: out.ReportsLeftOut}); diff != "" {
				t.Errorf("route reports, -want +got:\n%s", diff)
			}
		})
	}
}
