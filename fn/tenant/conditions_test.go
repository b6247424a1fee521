package tenant

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/conditions"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// TestTenantGatewayReady: the claim shows the cause its TenantGateway's
// GatewayReady gives, as provider-kubernetes observed it; Crossplane's Ready
// only where GatewayReady has nothing to say.
func TestTenantGatewayReady(t *testing.T) {
	rootLabels := map[string]string{kube.LabelNamespaceGateway: "tenant-root", kube.LabelNamespaceHost: "example.org"}
	bob := func(gw *bool, observed ...xpv2.Condition) Input {
		return Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: gw}, ParentLabels: rootLabels, Platform: platform(), GatewayConditions: observed}
	}
	gatewayReady := func(status corev1.ConditionStatus, reason conditions.Reason, message string) xpv2.Condition {
		return xpv2.Condition{Type: xpv2.ConditionType(conditions.GatewayReady), Status: status, Reason: xpv2.ConditionReason(reason), Message: message}
	}
	const (
		notFound = "GatewayClass cillium does not exist, so no controller will accept Gateway tenant-bob/cozystack; set spec.gatewayClassName to a class of the cluster (kubectl get gatewayclass)"
		notReady = "Gateway tenant-bob/cozystack has 1 of 2 listeners not ready: https-shop-1a2b3c4d (CertificateNotReady: DoesNotExist: Issuing certificate as Secret does not exist) (see status.listeners)"
	)
	available := xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionTrue, Reason: xpv2.ReasonAvailable}
	creating := xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: xpv2.ReasonCreating, Message: "Unready resources: gateway, issuer"}
	cases := map[string]struct {
		reason string
		in     Input
		want   []Condition
	}{
		"NoGateway": {
			reason: "a tenant that owns no TenantGateway has no such condition, whatever an old Object reports",
			in:     bob(nil, available, gatewayReady(corev1.ConditionFalse, conditions.ReasonGatewayClassNotFound, notFound)),
		},
		"NotReportedYet": {
			reason: "until the TenantGateway reports GatewayReady or Ready, False Creating",
			in:     bob(yes),
			want: []Condition{{Type: ConditionTenantGatewayReady, Reason: ReasonCreating,
				Message: "TenantGateway tenant-bob/cozystack has not reported readiness yet"}},
		},
		"OnlySynced": {
			reason: "a TenantGateway with conditions but neither GatewayReady nor Ready has not reported readiness",
			in:     bob(yes, xpv2.Condition{Type: xpv2.TypeSynced, Status: corev1.ConditionTrue, Reason: xpv2.ReasonReconcileSuccess}),
			want: []Condition{{Type: ConditionTenantGatewayReady, Reason: ReasonCreating,
				Message: "TenantGateway tenant-bob/cozystack has not reported readiness yet"}},
		},
		"ClassNotFound": {
			reason: "GatewayReady False is mirrored with its cause and message, not Crossplane's Creating",
			in:     bob(yes, creating, gatewayReady(corev1.ConditionFalse, conditions.ReasonGatewayClassNotFound, notFound)),
			want:   []Condition{{Type: ConditionTenantGatewayReady, Reason: ConditionReason(conditions.ReasonGatewayClassNotFound), Message: notFound}},
		},
		"ListenersNotReady": {
			reason: "the cause wins whatever order the conditions come in",
			in:     bob(yes, gatewayReady(corev1.ConditionFalse, conditions.ReasonListenersNotReady, notReady), creating),
			want:   []Condition{{Type: ConditionTenantGatewayReady, Reason: ConditionReason(conditions.ReasonListenersNotReady), Message: notReady}},
		},
		"CauseWhileReadyTrue": {
			reason: "GatewayReady False while Crossplane's Ready is still True (the function judged a listener before Crossplane caught up): the cause, False",
			in:     bob(yes, available, gatewayReady(corev1.ConditionFalse, conditions.ReasonListenersNotReady, notReady)),
			want:   []Condition{{Type: ConditionTenantGatewayReady, Reason: ConditionReason(conditions.ReasonListenersNotReady), Message: notReady}},
		},
		"Reconciled": {
			reason: "GatewayReady True with Ready True: True Reconciled with the function's message",
			in:     bob(yes, xpv2.Condition{Type: xpv2.TypeSynced, Status: corev1.ConditionFalse}, available, gatewayReady(corev1.ConditionTrue, conditions.ReasonReconciled, "Gateway tenant-bob/cozystack is programmed and every listener is ready")),
			want: []Condition{{Type: ConditionTenantGatewayReady, Status: true, Reason: ConditionReason(conditions.ReasonReconciled),
				Message: "Gateway tenant-bob/cozystack is programmed and every listener is ready"}},
		},
		"ReconciledReadyMissing": {
			reason: "GatewayReady True and no Ready at all: GatewayReady",
			in:     bob(yes, gatewayReady(corev1.ConditionTrue, conditions.ReasonReconciled, "")),
			want:   []Condition{{Type: ConditionTenantGatewayReady, Status: true, Reason: ConditionReason(conditions.ReasonReconciled)}},
		},
		"ReconciledButNotReady": {
			reason: "GatewayReady True while Crossplane's Ready is False (an Issuer not ready yet): Ready's reason and message, so the claim never says ready before its TenantGateway",
			in:     bob(yes, gatewayReady(corev1.ConditionTrue, conditions.ReasonReconciled, "Gateway tenant-bob/cozystack is programmed and every listener is ready"), creating),
			want:   []Condition{{Type: ConditionTenantGatewayReady, Reason: "Creating", Message: "Unready resources: gateway, issuer"}},
		},
		"ReadyBeforeGatewayReady": {
			reason: "before the function has written GatewayReady, Crossplane's Ready is mirrored with its reason and message",
			in:     bob(yes, creating),
			want:   []Condition{{Type: ConditionTenantGatewayReady, Reason: "Creating", Message: "Unready resources: gateway, issuer"}},
		},
		"ReadyTrueBeforeGatewayReady": {
			reason: "a TenantGateway that is Ready with no GatewayReady (written by something else): Ready True is mirrored",
			in:     bob(yes, available),
			want:   []Condition{{Type: ConditionTenantGatewayReady, Status: true, Reason: "Available"}},
		},
		"Unknown": {
			reason: "any status but True is not ready",
			in:     bob(yes, gatewayReady(corev1.ConditionUnknown, "Unknown", "")),
			want:   []Condition{{Type: ConditionTenantGatewayReady, Reason: "Unknown"}},
		},
		"Bounded": {
			reason: "the claim sits in the parent's namespace: reason and message are cut at 1,024 bytes, whatever wrote that status",
			in:     bob(yes, gatewayReady(corev1.ConditionFalse, conditions.Reason(strings.Repeat("r", 2000)), strings.Repeat("x", 100000))),
			want: []Condition{{Type: ConditionTenantGatewayReady, Reason: ConditionReason(strings.Repeat("r", 1021) + "…"),
				Message: strings.Repeat("x", 1021) + "…"}},
		},
		"ReadyBounded": {
			reason: "Crossplane's Ready, mirrored, is bounded the same way",
			in:     bob(yes, xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: "Creating", Message: strings.Repeat("x", 100000)}),
			want:   []Condition{{Type: ConditionTenantGatewayReady, Reason: "Creating", Message: strings.Repeat("x", 1021) + "…"}},
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
