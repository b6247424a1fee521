package tenant

import (
	"fmt"
	"slices"
	"strings"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// ConditionCozystackValuesAgree is set on the publishing tenant only: True
// when what Cozystack's platform charts rendered from their own values
// agrees with this project's platform settings where a refusal rests on
// both, False naming each disagreement, both values and what to change
// (see Scope in docs/design.md):
//
//   - the HTTP-01 solver of every ClusterIssuer that names the publishing
//     tenant's Gateway pins its http listener exactly when
//     gateway.className is not edge-terminated (Cozystack's chart decides
//     the pin from its own gateway.className, and the publishing tenant's
//     edge refusal rests on the two being one value);
//   - the publishing namespace's host label, which Cozystack's charts may
//     write from their publishing.host, equals publishing.host.
const ConditionCozystackValuesAgree ConditionType = "CozystackValuesAgree"

// Reasons of CozystackValuesAgree.
const (
	// ReasonValuesAgree: nothing observed disagrees.
	ReasonValuesAgree ConditionReason = "Agree"
	// ReasonValuesDiffer: a value of the platform settings and what
	// Cozystack rendered from its own disagree; the message says which.
	ReasonValuesDiffer ConditionReason = "ValuesDiffer"
)

// listenerHTTP is the name of the port-80 listener of every Gateway but an
// edge one, the listener Cozystack's ClusterIssuers pin.
const listenerHTTP = "http"

// ChecksClusterIssuers reports whether the run of the Tenant claim name in
// namespace parent reads the cluster's ClusterIssuers: only the publishing
// tenant's does, and only when it owns a Gateway, the one the ClusterIssuers'
// HTTP-01 solvers name.
func ChecksClusterIssuers(name, parent string, owning bool, p Platform) bool {
	return owning && isPublishing(name, parent, p)
}

// NeedsPublishingNamespace reports whether a Tenant's run reads the
// publishing tenant's namespace besides its parent's: only a tenant nested
// below the publishing tenant's direct children that owns its Gateway and
// is given a host outside its parent's zone, whose refusal rests on the
// platform's zone (checkNestedHost). Every other Tenant requires nothing
// more.
func NeedsPublishingNamespace(name, parent, host string, owning bool, parentLabels map[string]string, p Platform) bool {
	if !owning || host == "" || parent == p.IngressName || isPublishing(name, parent, p) {
		return false
	}
	ph := parentLabels[kube.LabelNamespaceHost]
	return ph == "" || !inZone(host, ph)
}

// labelZone is the zone the publishing namespace's host label names when
// it is not publishing.host, "" otherwise: the two disagree when
// Cozystack's values give that label another apex than the platform
// settings do, and every tenant's zone derives from the label, so the
// refusal of a nested tenant's own apex counts a name in it as the
// platform's too (checkNestedHost).
func labelZone(in Input) string {
	if l := in.PublishingLabels[kube.LabelNamespaceHost]; l != in.Platform.Host {
		return l
	}
	return ""
}

// valuesAgree is CozystackValuesAgree for the publishing tenant, and the
// warning to raise: the condition's message, only when it is False and
// differs from the one the tenant already shows, as classesFound does.
// Other tenants have no such condition.
func valuesAgree(in Input, owning bool) (c Condition, warning string, ok bool) {
	if !isPublishing(in.Name, in.Parent, in.Platform) {
		return Condition{}, "", false
	}
	p := in.Platform
	var differ []string
	if owning {
		differ = issuerDrift(in.ClusterIssuers, p)
	}
	if l := in.ParentLabels[kube.LabelNamespaceHost]; l != "" && p.Host != "" && l != p.Host {
		differ = append(differ, fmt.Sprintf("namespace %s carries the host label %q (Cozystack's charts write it from their publishing.host), but publishing.host is %q: the root tenant rewrites the label, which moves every tenant's zone and so what each may serve, and a chart that writes it again moves it back; set publishing.host to one apex in both", p.IngressName, l, p.Host))
	}
	if len(differ) == 0 {
		return Condition{Type: ConditionCozystackValuesAgree, Status: true, Reason: ReasonValuesAgree,
			Message: fmt.Sprintf("Nothing Cozystack's charts rendered disagrees with the platform settings: the HTTP-01 solvers of the ClusterIssuers that name Gateway %s/%s, and namespace %s's host label", p.IngressName, TenantGateway, p.IngressName)}, "", true
	}
	c = Condition{Type: ConditionCozystackValuesAgree, Reason: ReasonValuesDiffer, Message: text.BoundedList(
		"The platform settings and Cozystack's platform values disagree: ", differ, "; ", "")}
	if last, ok := find(in.Conditions, xpv2.ConditionType(ConditionCozystackValuesAgree)); ok && last.Status == corev1.ConditionFalse && last.Message == c.Message {
		return c, "", true
	}
	return c, c.Message, true
}

// issuerDrift names each HTTP-01 solver of a ClusterIssuer, by name order,
// whose parentRef to the publishing tenant's Gateway disagrees with
// gateway.className: Cozystack's platform chart pins it to the http
// listener when its own gateway.className is not edge-terminated, and
// names no listener when it is, so a solver that disagrees with ours was
// rendered from another className.
func issuerDrift(issuers []cmv1.ClusterIssuer, p Platform) []string {
	var out []string
	for _, ci := range slices.SortedFunc(slices.Values(issuers), func(a, b cmv1.ClusterIssuer) int { return strings.Compare(a.Name, b.Name) }) {
		if ci.Spec.ACME == nil {
			continue
		}
		for i, s := range ci.Spec.ACME.Solvers {
			if s.HTTP01 == nil || s.HTTP01.GatewayHTTPRoute == nil {
				continue
			}
			at := fmt.Sprintf("ClusterIssuer %s (spec.acme.solvers[%d])", ci.Name, i)
			for _, ref := range s.HTTP01.GatewayHTTPRoute.ParentRefs {
				ns, ok := namesTenantGateway(ref)
				if !ok {
					continue
				}
				if ns != p.IngressName {
					// Cozystack points the solver at its publishing tenant's
					// Gateway: another namespace there is another
					// publishing.ingressName, and the edge refusal then
					// guards a tenant the solver does not use.
					out = append(out, fmt.Sprintf("%s names Gateway %s/%s, the Gateway of Cozystack's publishing tenant, but publishing.ingressName here is %q: the refusal that keeps the publishing tenant's class as edge-terminated as gateway.className guards %s, not %s; set publishing.ingressName to one namespace in both", at, ns, TenantGateway, p.IngressName, p.IngressName, ns))
					continue
				}
				if d, ok := solverDrift(at, ref.SectionName, p); ok {
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// solverDrift says how the listener a solver pins (sectionName, nil for
// none) disagrees with gateway.className's edge-ness, naming the solver
// (at), both values and what to change; false when it agrees.
func solverDrift(at string, sectionName *gwapiv1.SectionName, p Platform) (string, bool) {
	edge := slices.Contains(p.EdgeTerminatedClasses, p.ClassName)
	mode := "not edge-terminated, so the Gateway has a listener http"
	if edge {
		mode = "edge-terminated (gateway.edgeTerminatedClasses), so the Gateway has no listener http"
	}
	gw := p.IngressName + "/" + TenantGateway
	switch {
	case sectionName == nil && edge, sectionName != nil && !edge && *sectionName == listenerHTTP:
		return "", false
	case sectionName == nil:
		return fmt.Sprintf("%s names Gateway %s without a listener, as Cozystack renders for an edge-terminated gateway.className, but gateway.className %q here is %s: its challenge routes attach to every listener that admits them; set gateway.className to one class in both", at, gw, p.ClassName, mode), true
	case edge:
		return fmt.Sprintf("%s pins its HTTP-01 challenges to listener %q of Gateway %s, as Cozystack renders for a gateway.className that is not edge-terminated, but gateway.className %q here is %s: every HTTP-01 certificate it issues stops; set gateway.className to one class in both", at, *sectionName, gw, p.ClassName, mode), true
	default:
		return fmt.Sprintf("%s pins its HTTP-01 challenges to listener %q of Gateway %s, but only listener %q serves port 80 there (gateway.className %q is %s): every HTTP-01 certificate it issues stops; pin %q", at, *sectionName, gw, listenerHTTP, p.ClassName, mode, listenerHTTP), true
	}
}

// namesTenantGateway is the namespace of the Gateway a solver's parentRef
// names when that is a TenantGateway's (every one is named cozystack):
// kind Gateway of Gateway API (the defaults) and its namespace spelt out (a
// parentRef without one names a Gateway in each challenge's own
// namespace).
func namesTenantGateway(ref gwapiv1.ParentReference) (string, bool) {
	if (ref.Group != nil && string(*ref.Group) != gwapiv1.GroupName) || (ref.Kind != nil && string(*ref.Kind) != kindGateway) ||
		string(ref.Name) != TenantGateway || ref.Namespace == nil {
		return "", false
	}
	return string(*ref.Namespace), true
}

// kindGateway is the kind of Gateway API's Gateway.
const kindGateway = "Gateway"
