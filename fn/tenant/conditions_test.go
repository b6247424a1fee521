package tenant

import (
	"errors"
	"fmt"
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

func TestAcceptance(t *testing.T) {
	cases := map[string]struct {
		reason string
		err    error
		want   Condition
		ok     bool
	}{
		"Derived": {
			reason: "A derived tenant is Accepted, naming the claim",
			want:   Condition{Type: ConditionAccepted, Status: true, Reason: ReasonDerived, Message: "Tenant tenant-root/alpha was derived from its spec and the platform settings"},
			ok:     true,
		},
		"Refused": {
			reason: "A refusal, however wrapped, is Accepted False with the refusal's own message",
			err:    fmt.Errorf("cannot derive: %w", refuse("tenant name %q is too long", "alpha")),
			want:   Condition{Type: ConditionAccepted, Reason: ReasonRefused, Message: `tenant name "alpha" is too long`},
			ok:     true,
		},
		"FunctionFailure": {
			reason: "Any other error is the function's own failure: no condition",
			err:    errors.New("cannot encode"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := Acceptance("alpha", "tenant-root", tc.err)
			if ok != tc.ok {
				t.Fatalf("%s\nAcceptance(...): ok %t, want %t", tc.reason, ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nAcceptance(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
