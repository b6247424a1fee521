package tenant

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
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
	// ConditionTenantGatewayReady mirrors the Ready condition of the
	// tenant's own TenantGateway, as provider-kubernetes observed it, with
	// its reason and message.
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
// (out.Ready has an entry for each resource it composes):
// the first Ready condition among in.GatewayConditions, its reason and
// message bounded like every message the function writes (see Bounds in
// docs/design.md: the claim sits in the parent's namespace), or False
// Creating while the TenantGateway reports none. A tenant without a
// TenantGateway has no such condition.
func gatewayReady(in Input, out *Output) (Condition, bool) {
	if _, owns := out.Ready[KeyTenantGateway]; !owns {
		return Condition{}, false
	}
	for _, c := range in.GatewayConditions {
		if c.Type != xpv2.TypeReady {
			continue
		}
		return Condition{Type: ConditionTenantGatewayReady, Status: c.Status == corev1.ConditionTrue,
			Reason: ConditionReason(gateway.Truncate(string(c.Reason))), Message: gateway.Truncate(c.Message)}, true
	}
	return Condition{Type: ConditionTenantGatewayReady, Reason: ReasonCreating,
		Message: fmt.Sprintf("TenantGateway %s/%s has not reported readiness yet", out.Status.Namespace, TenantGateway)}, true
}
