package tenant

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// TestGatewayClassesFound: the publishing tenant's claim says which classes
// of the platform settings match no GatewayClass, and warns once per set of
// missing classes; no other tenant says anything about them.
func TestGatewayClassesFound(t *testing.T) {
	const (
		prefix = "The platform settings name classes that match no GatewayClass of the cluster: "
		suffix = ". A tenant that names a selectable class that does not exist gets a Gateway no controller accepts; an edge-terminated class that does not exist never puts a tenant in edge mode, so a Gateway whose TLS an edge terminates keeps terminating it itself. Compare with kubectl get gatewayclass"
		found  = "Every class in gateway.tenantSelectableClasses and gateway.edgeTerminatedClasses is a GatewayClass of the cluster"
	)
	cluster := []string{"cilium", "edge-tunnel", "envoy"}
	// lists is the platform of the tests with these class lists.
	lists := func(selectable, edge []string) Platform {
		p := platform()
		p.TenantSelectableClasses, p.EdgeTerminatedClasses = selectable, edge
		return p
	}
	root := func(p Platform, classes []string, shown ...xpv2.Condition) Input {
		return Input{Name: RootTenant, Parent: "tenant-root", Platform: p, GatewayClasses: classes, Conditions: shown}
	}
	misspelt := prefix + `gateway.edgeTerminatedClasses "edge-tunel"` + suffix
	shown := func(status corev1.ConditionStatus, message string) xpv2.Condition {
		return xpv2.Condition{Type: xpv2.ConditionType(ConditionGatewayClassesFound), Status: status, Reason: "whatever", Message: message}
	}
	notFound := func(message string) *Condition {
		return &Condition{Type: ConditionGatewayClassesFound, Reason: ReasonGatewayClassNotFound, Message: message}
	}
	allFound := &Condition{Type: ConditionGatewayClassesFound, Status: true, Reason: ReasonClassesFound, Message: found}
	rootLabels := map[string]string{kube.LabelNamespaceGateway: "tenant-root", kube.LabelNamespaceHost: "example.org"}
	cases := map[string]struct {
		reason   string
		in       Input
		want     *Condition
		warnings []string
	}{
		"OtherTenant": {
			reason: "a tenant that is not the publishing one says nothing about the settings, even with a class missing",
			in: Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels,
				Platform: lists(nil, []string{"edge-tunel"})},
		},
		"RootOfAnotherNamespace": {
			reason: "a claim named root outside the publishing namespace is not the publishing tenant",
			in: Input{Name: RootTenant, Parent: "tenant-alice", ParentLabels: map[string]string{kube.LabelNamespaceGateway: "tenant-root", kube.LabelNamespaceHost: "alice.example.org"},
				Platform: lists(nil, []string{"edge-tunel"})},
		},
		"AllFound": {
			reason: "every listed class is a GatewayClass: True, no warning",
			in:     root(lists([]string{"envoy", "edge-tunnel"}, []string{"edge-tunnel"}), cluster),
			want:   allFound,
		},
		"NoneListed": {
			reason: "nothing listed (and so no GatewayClass read): True",
			in:     root(lists(nil, nil), nil),
			want:   allFound,
		},
		"MisspeltEdgeClass": {
			reason: "an edge-terminated class that matches no GatewayClass is named with its setting, and warned",
			in:     root(lists([]string{"envoy", "edge-tunnel"}, []string{"edge-tunel"}), cluster),
			want:   notFound(misspelt), warnings: []string{misspelt},
		},
		"SelectableAndEdge": {
			reason: "selectable classes first, then edge ones, each in the settings' order, each entry once; a class in both lists is named under each",
			in:     root(lists([]string{"envy", "edge-tunel", "cilium", "envy"}, []string{"edge-tunel", "zeta", "alpha"}), cluster),
			want: notFound(prefix + `gateway.tenantSelectableClasses "envy", gateway.tenantSelectableClasses "edge-tunel", ` +
				`gateway.edgeTerminatedClasses "edge-tunel", gateway.edgeTerminatedClasses "zeta", gateway.edgeTerminatedClasses "alpha"` + suffix),
			warnings: []string{prefix + `gateway.tenantSelectableClasses "envy", gateway.tenantSelectableClasses "edge-tunel", ` +
				`gateway.edgeTerminatedClasses "edge-tunel", gateway.edgeTerminatedClasses "zeta", gateway.edgeTerminatedClasses "alpha"` + suffix},
		},
		"NoGatewayClassAtAll": {
			reason: "a cluster without GatewayClasses: every listed class is missing",
			in:     root(lists([]string{"envoy"}, nil), nil),
			want:   notFound(prefix + `gateway.tenantSelectableClasses "envoy"` + suffix), warnings: []string{prefix + `gateway.tenantSelectableClasses "envoy"` + suffix},
		},
		"CaseMatters": {
			reason: "GatewayClass names are lower case: a name that differs only in case is another name",
			in:     root(lists(nil, []string{"Edge-Tunnel"}), cluster),
			want:   notFound(prefix + `gateway.edgeTerminatedClasses "Edge-Tunnel"` + suffix), warnings: []string{prefix + `gateway.edgeTerminatedClasses "Edge-Tunnel"` + suffix},
		},
		"AlreadyShown": {
			reason: "the claim already shows this very message: the condition stays, no warning again",
			in:     root(lists(nil, []string{"edge-tunel"}), cluster, shown(corev1.ConditionFalse, misspelt)),
			want:   notFound(misspelt),
		},
		"SetChanged": {
			reason:   "another class went missing since: the message changes, and warns",
			in:       root(lists([]string{"envy"}, []string{"edge-tunel"}), cluster, shown(corev1.ConditionFalse, misspelt)),
			want:     notFound(prefix + `gateway.tenantSelectableClasses "envy", gateway.edgeTerminatedClasses "edge-tunel"` + suffix),
			warnings: []string{prefix + `gateway.tenantSelectableClasses "envy", gateway.edgeTerminatedClasses "edge-tunel"` + suffix},
		},
		"WasFound": {
			reason: "every class was found last time: a class that goes missing warns",
			in:     root(lists(nil, []string{"edge-tunel"}), cluster, shown(corev1.ConditionTrue, found)),
			want:   notFound(misspelt), warnings: []string{misspelt},
		},
		"SameMessageOtherStatus": {
			reason: "a condition shown with the same message but not False (written by someone else) is not this warning",
			in:     root(lists(nil, []string{"edge-tunel"}), cluster, shown(corev1.ConditionUnknown, misspelt)),
			want:   notFound(misspelt), warnings: []string{misspelt},
		},
		"Fixed": {
			reason: "the class is fixed: True, and no warning",
			in:     root(lists(nil, []string{"edge-tunnel"}), cluster, shown(corev1.ConditionFalse, misspelt)),
			want:   allFound,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Derive(tc.in)
			if err != nil {
				t.Fatalf("%s\nDerive: %v", tc.reason, err)
			}
			var got *Condition
			for _, c := range out.Conditions {
				if c.Type == ConditionGatewayClassesFound {
					got = &c
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ncondition (-want +got):\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.warnings, out.Warnings); diff != "" {
				t.Errorf("%s\nwarnings (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestGatewayClassesFoundBounded: however many and however long the
// missing classes, the message, and so the warning, stays within 1,024
// bytes and says how many it left out.
func TestGatewayClassesFoundBounded(t *testing.T) {
	p := platform()
	p.TenantSelectableClasses, p.EdgeTerminatedClasses = nil, nil
	for i := range 200 {
		p.EdgeTerminatedClasses = append(p.EdgeTerminatedClasses, fmt.Sprintf("class-%03d-%s", i, strings.Repeat("c", 240)))
	}
	p.TenantSelectableClasses = []string{strings.Repeat("s", 5000)}
	out, err := Derive(Input{Name: RootTenant, Parent: "tenant-root", Platform: p})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Warnings) != 1 {
		t.Fatalf("want one warning, got %d", len(out.Warnings))
	}
	for _, c := range out.Conditions {
		if c.Type != ConditionGatewayClassesFound {
			continue
		}
		if len(c.Message) > text.MaxMessage || !strings.Contains(c.Message, " more") || c.Message != out.Warnings[0] {
			t.Errorf("message of %d bytes (at most %d), saying how many more, the warning's: %.120s…", len(c.Message), text.MaxMessage, c.Message)
		}
		return
	}
	t.Error("no GatewayClassesFound condition")
}

// TestChecksClasses: only the publishing tenant's run reads GatewayClasses,
// and only when the settings list a class.
func TestChecksClasses(t *testing.T) {
	edge := platform()
	edge.TenantSelectableClasses = nil
	none := platform()
	none.TenantSelectableClasses, none.EdgeTerminatedClasses = nil, nil
	selectable := platform()
	selectable.EdgeTerminatedClasses = nil
	cases := map[string]struct {
		name, parent string
		p            Platform
		want         bool
	}{
		"PublishingWithBoth":       {RootTenant, "tenant-root", platform(), true},
		"PublishingWithEdge":       {RootTenant, "tenant-root", edge, true},
		"PublishingWithSelectable": {RootTenant, "tenant-root", selectable, true},
		"PublishingListingNone":    {RootTenant, "tenant-root", none, false},
		"OtherTenant":              {"alice", "tenant-root", platform(), false},
		"RootElsewhere":            {RootTenant, "tenant-alice", platform(), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ChecksClasses(tc.name, tc.parent, tc.p); got != tc.want {
				t.Errorf("ChecksClasses(%q, %q): %t, want %t", tc.name, tc.parent, got, tc.want)
			}
		})
	}
}
