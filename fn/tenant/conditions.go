package tenant

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/cozystack/function-tenant-gateway/fn/conditions"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// A ConditionType is a condition the function sets on an XTenant and, since
// every one targets the composite and its claim, on the Tenant claim, where
// a tenant who can read only its own namespace reads it (see "Tenants" in
// docs/design.md).
type ConditionType string

const (
	// ConditionAccepted is True when the tenant was derived from its spec
	// and the platform settings, and False with reason Refused when it was
	// not: the message names the field or setting at fault and the allowed
	// values. A refused tenant composes nothing new and keeps what it had.
	ConditionAccepted ConditionType = "Accepted"
	// ConditionTenantGatewayReady mirrors the GatewayReady condition of the
	// tenant's own TenantGateway, as provider-kubernetes observed it, with
	// its reason (the cause: GatewayClassNotFound, ListenersNotReady, …)
	// and message; Crossplane's Ready where GatewayReady has nothing to say
	// (see Tenants in docs/design.md).
	ConditionTenantGatewayReady ConditionType = "TenantGatewayReady"
)

// A ConditionReason is the reason of a Tenant condition.
type ConditionReason string

const (
	// ReasonDerived is Accepted's reason when it is True.
	ReasonDerived ConditionReason = "Derived"
	// ReasonRefused is Accepted's reason when it is False; the message says why.
	ReasonRefused ConditionReason = "Refused"
	// ReasonCreating is TenantGatewayReady's reason when it is False because
	// the TenantGateway has not reported readiness yet.
	ReasonCreating ConditionReason = "Creating"
)

// Condition is one Tenant condition as the edge writes it.
type Condition struct {
	Type    ConditionType
	Status  bool
	Reason  ConditionReason
	Message string
}

// Acceptance is the Accepted condition for the outcome of Derive: True, or
// False with the refusal's message when err is a RefusedError. Any other
// error is the function's own failure, not the tenant's, and has none.
func Acceptance(name, parent string, err error) (Condition, bool) {
	var refused *RefusedError
	switch {
	case err == nil:
		return Condition{Type: ConditionAccepted, Status: true, Reason: ReasonDerived,
			Message: fmt.Sprintf("Tenant %s/%s was derived from its spec and the platform settings", parent, name)}, true
	case errors.As(err, &refused):
		return Condition{Type: ConditionAccepted, Reason: ReasonRefused, Message: refused.Reason}, true
	default:
		return Condition{}, false
	}
}

// gatewayReady is TenantGatewayReady for a tenant that owns a TenantGateway
// (out.Ready has an entry for each resource it composes), from the
// conditions of that TenantGateway (in.GatewayConditions), reason and
// message bounded like every message the function writes (see Bounds in
// docs/design.md: the claim sits in the parent's namespace):
//
//   - GatewayReady, which names the cause (GatewayClassNotFound,
//     ListenersNotReady, …), whenever it is False, or True while Crossplane's
//     Ready agrees (or is missing);
//   - Crossplane's Ready before the function has written GatewayReady, and
//     when GatewayReady is True but Ready is not (an Issuer or a namespace
//     patch not ready yet): a claim never says ready before its
//     TenantGateway does;
//   - else False Creating.
//
// A tenant without a TenantGateway has no such condition.
func gatewayReady(in Input, out *Output) (Condition, bool) {
	if _, owns := out.Ready[KeyTenantGateway]; !owns {
		return Condition{}, false
	}
	cause, hasCause := find(in.GatewayConditions, xpv2.ConditionType(conditions.GatewayReady))
	ready, hasReady := find(in.GatewayConditions, xpv2.TypeReady)
	switch {
	case hasCause && (cause.Status != corev1.ConditionTrue || !hasReady || ready.Status == corev1.ConditionTrue):
		return mirror(cause), true
	case hasReady:
		return mirror(ready), true
	default:
		return Condition{Type: ConditionTenantGatewayReady, Reason: ReasonCreating,
			Message: fmt.Sprintf("TenantGateway %s/%s has not reported readiness yet", out.Status.Namespace, TenantGateway)}, true
	}
}

// find is the first condition of type t among cs.
func find(cs []xpv2.Condition, t xpv2.ConditionType) (xpv2.Condition, bool) {
	for _, c := range cs {
		if c.Type == t {
			return c, true
		}
	}
	return xpv2.Condition{}, false
}

// mirror is TenantGatewayReady carrying c's status, and its reason and
// message bounded.
func mirror(c xpv2.Condition) Condition {
	return Condition{Type: ConditionTenantGatewayReady, Status: c.Status == corev1.ConditionTrue,
		Reason: ConditionReason(text.Truncate(string(c.Reason))), Message: text.Truncate(c.Message)}
}
