package tenant

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/cozystack/function-tenant-gateway/fn/conditions"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// ConditionGatewayClassesFound is set on the publishing tenant only: True
// when every class the platform settings list in
// gateway.tenantSelectableClasses and gateway.edgeTerminatedClasses is a
// GatewayClass of the cluster, False naming each that is not (see Tenants
// in docs/design.md).
const ConditionGatewayClassesFound ConditionType = "GatewayClassesFound"

// Reasons of GatewayClassesFound.
const (
	// ReasonClassesFound: every listed class is a GatewayClass.
	ReasonClassesFound ConditionReason = "Found"
	// ReasonGatewayClassNotFound: a listed class matches no GatewayClass;
	// the TenantGateway's GatewayReady reason of the same name.
	ReasonGatewayClassNotFound = ConditionReason(conditions.ReasonGatewayClassNotFound)
)

// ChecksClasses reports whether the run of the Tenant claim name in
// namespace parent reads the cluster's GatewayClasses: only the publishing
// tenant's does, the operator's own Tenant, where a warning about
// cluster-wide settings belongs, and only when the settings list a class
// to check. Every other Tenant, and the publishing one on a platform that
// lists none, requires nothing more.
func ChecksClasses(name, parent string, p Platform) bool {
	return isPublishing(name, parent, p) && len(p.TenantSelectableClasses)+len(p.EdgeTerminatedClasses) > 0
}

// isPublishing reports whether the claim name in namespace parent is the
// publishing (root) tenant.
func isPublishing(name, parent string, p Platform) bool {
	return name == RootTenant && parent == p.IngressName
}

// classesFound is GatewayClassesFound for the publishing tenant, from the
// GatewayClasses the run read (in.GatewayClasses), and the warning to raise:
// the condition's message, only when it is False and differs from the one
// the tenant already shows (in.Conditions), so a misspelled class warns
// once, and again only when the set of missing classes changes. Other
// tenants have no such condition.
func classesFound(in Input) (c Condition, warning string, ok bool) {
	if !isPublishing(in.Name, in.Parent, in.Platform) {
		return Condition{}, "", false
	}
	var missing []string
	for _, l := range []struct {
		setting string
		classes []string
	}{
		{"gateway.tenantSelectableClasses", in.Platform.TenantSelectableClasses},
		{"gateway.edgeTerminatedClasses", in.Platform.EdgeTerminatedClasses},
	} {
		var seen []string
		for _, class := range l.classes {
			if slices.Contains(in.GatewayClasses, class) || slices.Contains(seen, class) {
				continue
			}
			seen = append(seen, class)
			missing = append(missing, fmt.Sprintf("%s %q", l.setting, class))
		}
	}
	if len(missing) == 0 {
		return Condition{Type: ConditionGatewayClassesFound, Status: true, Reason: ReasonClassesFound,
			Message: "Every class in gateway.tenantSelectableClasses and gateway.edgeTerminatedClasses is a GatewayClass of the cluster"}, "", true
	}
	c = Condition{Type: ConditionGatewayClassesFound, Reason: ReasonGatewayClassNotFound, Message: text.BoundedList(
		"The platform settings name classes that match no GatewayClass of the cluster: ", missing, ", ",
		". A tenant that names a selectable class that does not exist gets a Gateway no controller accepts; an edge-terminated class that does not exist never puts a tenant in edge mode, so a Gateway whose TLS an edge terminates keeps terminating it itself. Compare with kubectl get gatewayclass")}
	if last, ok := find(in.Conditions, xpv2.ConditionType(ConditionGatewayClassesFound)); ok && last.Status == corev1.ConditionFalse && last.Message == c.Message {
		return c, "", true
	}
	return c, c.Message, true
}
