package tenant

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// TestTenantGatewayReady: the claim shows the Ready condition of the
// tenant's own TenantGateway, as provider-kubernetes observed it.
func TestTenantGatewayReady(t *testing.T) {
	rootLabels := map[string]string{gateway.LabelNamespaceGateway: "tenant-root", gateway.LabelNamespaceHost: "example.org"}
	bob := func(gw *bool, observed ...xpv2.Condition) Input {
		return Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: gw}, ParentLabels: rootLabels, Platform: platform(), GatewayConditions: observed}
	}
	cases := map[string]struct {
		reason string
		in     Input
		want   []Condition
	}{
		"NoGateway": {
			reason: "a tenant that owns no TenantGateway has no such condition, whatever an old Object reports",
			in:     bob(nil, xpv2.Condition{Type: xpv2.TypeReady, Status: "True"}),
		},
		"NotReportedYet": {
			reason: "until the TenantGateway reports Ready, False Creating",
			in:     bob(yes),
			want: []Condition{{Type: ConditionTenantGatewayReady, Reason: ReasonCreating,
				Message: "TenantGateway tenant-bob/cozystack has not reported readiness yet"}},
		},
		"OnlySynced": {
			reason: "a TenantGateway with conditions but no Ready one has not reported readiness",
			in:     bob(yes, xpv2.Condition{Type: xpv2.TypeSynced, Status: "True", Reason: "ReconcileSuccess"}),
			want: []Condition{{Type: ConditionTenantGatewayReady, Reason: ReasonCreating,
				Message: "TenantGateway tenant-bob/cozystack has not reported readiness yet"}},
		},
		"Ready": {
			reason: "Ready True is mirrored with its reason",
			in:     bob(yes, xpv2.Condition{Type: xpv2.TypeSynced, Status: "False"}, xpv2.Condition{Type: xpv2.TypeReady, Status: "True", Reason: "Available"}),
			want:   []Condition{{Type: ConditionTenantGatewayReady, Status: true, Reason: "Available"}},
		},
		"NotReady": {
			reason: "Ready False is mirrored with its reason and message",
			in:     bob(yes, xpv2.Condition{Type: xpv2.TypeReady, Status: "False", Reason: "Creating", Message: "Gateway tenant-bob/cozystack is not programmed"}),
			want:   []Condition{{Type: ConditionTenantGatewayReady, Reason: "Creating", Message: "Gateway tenant-bob/cozystack is not programmed"}},
		},
		"Unknown": {
			reason: "any status but True is not ready",
			in:     bob(yes, xpv2.Condition{Type: xpv2.TypeReady, Status: "Unknown", Reason: "Unknown"}),
			want:   []Condition{{Type: ConditionTenantGatewayReady, Reason: "Unknown"}},
		},
		"Bounded": {
			reason: "the claim sits in the parent's namespace: reason and message are cut at 1,024 bytes, whatever wrote that status",
			in:     bob(yes, xpv2.Condition{Type: xpv2.TypeReady, Status: "False", Reason: xpv2.ConditionReason(strings.Repeat("r", 2000)), Message: strings.Repeat("x", 100000)}),
			want: []Condition{{Type: ConditionTenantGatewayReady, Reason: ConditionReason(strings.Repeat("r", 1021) + "…"),
				Message: strings.Repeat("x", 1021) + "…"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Derive(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.Conditions); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
