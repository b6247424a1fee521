package gateway

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/conditions"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// A Condition the function sets on the XR.
type Condition struct {
	Type    conditions.Type
	Status  bool
	Reason  conditions.Reason
	Message string
}

// gatewayReady is GatewayReady: False with the first problem found, in the
// order of Status and conditions in docs/design.md, else True. ls are the
// judged listeners (judgedListeners).
func gatewayReady(in *Input, refused []string, listeners []gwapiv1.Listener, ls []v1alpha1.ListenerStatus) Condition {
	gw := in.Observed[KeyGateway]
	name := in.Namespace + "/" + in.Name
	c := Condition{Type: conditions.GatewayReady}
	switch {
	case len(refused) > 0:
		c.Reason, c.Message = conditions.ReasonReconcileError, text.BoundedList("", refused, "; ", "")
	case in.GatewayClass == nil:
		c.Reason = conditions.ReasonGatewayClassNotFound
		c.Message = fmt.Sprintf("GatewayClass %s does not exist, so no controller will accept Gateway %s; set spec.gatewayClassName to a class of the cluster (kubectl get gatewayclass)", in.Spec.GatewayClassName, name)
	case classLacksTLSRoute(in, listeners):
		c.Reason = conditions.ReasonGatewayClassUnsupported
		c.Message = fmt.Sprintf("GatewayClass %s lists its supported features but not TLSRoute, so nothing would serve the TLS passthrough listeners of Gateway %s", in.GatewayClass.Name, name)
	case gw != nil && staleStatus(gw) > 0:
		// Not judged on a status of a spec its controller has not seen
		// (it is down, or has not caught up yet): what it says may no
		// longer be true of the listeners Crossplane applied.
		c.Reason = conditions.ReasonGatewayStatusStale
		c.Message = fmt.Sprintf("Underlying Gateway %s is at generation %d; its controller's status describes generation %d, so the Gateway is not judged until the controller has seen it", name, gw.Generation, staleStatus(gw))
	case gw == nil || gw.Conditions[condAccepted] != statusTrue:
		c.Reason = conditions.ReasonGatewayNotAccepted
		c.Message = text.Truncate(fmt.Sprintf("Underlying Gateway %s has not been accepted by its controller yet", name) + controllerSays(gw, condAccepted))
	case gw.Conditions[condProgrammed] != statusTrue:
		c.Reason = conditions.ReasonGatewayNotProgrammed
		c.Message = text.Truncate(fmt.Sprintf("Underlying Gateway %s has not been programmed by its controller yet", name) + controllerSays(gw, condProgrammed))
	default:
		var bad []string
		for _, l := range ls {
			if !l.Ready {
				bad = append(bad, listenerCause(l))
			}
		}
		if len(bad) > 0 {
			c.Reason = conditions.ReasonListenersNotReady
			c.Message = text.BoundedList(fmt.Sprintf("Gateway %s has %d of %d listeners not ready: ", name, len(bad), len(ls)), bad, ", ", " (see status.listeners)")
			break
		}
		c.Status, c.Reason = true, conditions.ReasonReconciled
		c.Message = fmt.Sprintf("Gateway %s is programmed and every listener is ready", name)
	}
	return c
}

// controllerSays is ": <reason>: <message>" of a condition of an observed
// resource, as its controller wrote it, or "" when it wrote none.
func controllerSays(o *kube.ObservedResource, typ string) string {
	if o == nil || o.Reasons[typ] == "" && o.Messages[typ] == "" {
		return ""
	}
	out := ": " + o.Reasons[typ]
	if m := o.Messages[typ]; m != "" {
		out += ": " + m
	}
	return out
}

// listenerCause names a listener that is not ready with its reason, and
// for a certificate not ready cert-manager's words.
func listenerCause(l v1alpha1.ListenerStatus) string {
	if l.Message != "" {
		return l.Name + " (" + l.Reason + ": " + l.Message + ")"
	}
	return l.Name + " (" + l.Reason + ")"
}

// classLacksTLSRoute reports whether the Gateway has passthrough listeners
// and its class lists supported features without TLSRoute. A class that lists
// none is not judged: implementations predating the field leave it empty.
func classLacksTLSRoute(in *Input, listeners []gwapiv1.Listener) bool {
	if in.GatewayClass == nil || len(in.GatewayClass.SupportedFeatures) == 0 {
		return false
	}
	passthrough := false
	for _, l := range listeners {
		passthrough = passthrough || l.Protocol == gwapiv1.TLSProtocolType
	}
	if !passthrough {
		return false
	}
	return !slices.Contains(in.GatewayClass.SupportedFeatures, string(features.SupportTLSRoute))
}

// listenersReady is ListenersReady: False when a limit left hostnames or
// child apexes out, naming the limit that binds and advice for the mode.
func listenersReady(in *Input, l LeftOut, waiting int) Condition {
	c := Condition{Type: conditions.ListenersReady}
	switch {
	case l.Total() == 0 && waiting > 0:
		c.Reason = conditions.ReasonCertificateOrdersWaiting
		c.Message = fmt.Sprintf("%d hostnames or child apexes wait for certificate orders: the ACME CA issues at most %d certificates for %s in %s (platform setting %s), shared fairly by the branches of the delegation tree that ask; status.hostnames and status.childApexes say when each may order", waiting, in.Quota.Limit, RegisteredDomain(in.Spec.Apex), in.Quota.Window, acme.QuotaSettingPath)
	case l.Total() == 0:
		c.Status, c.Reason, c.Message = true, conditions.ReasonListenersFit, fmt.Sprintf("every hostname fits within the %d-listener limit", MaxListeners)
	case l.Certificate == 0:
		c.Reason = conditions.ReasonListenerLimitExceeded
		c.Message = fmt.Sprintf("%d hostnames or child apexes were left out: a Gateway holds at most %d listeners (see status.hostnames and status.childApexes); %s", l.Listeners, MaxListeners, budgetAdvice(in))
	case l.Listeners == 0:
		c.Reason = conditions.ReasonCertificateNameLimitExceeded
		c.Message = fmt.Sprintf("%d hostnames or child apexes were left out of the wildcard certificate: the ACME CA issues at most %d names per certificate (see status.childApexes); give large child tenants a Gateway of their own", l.Certificate, maxCertificateDNSNames)
	default:
		c.Reason = conditions.ReasonListenerLimitExceeded
		c.Message = fmt.Sprintf("%d hostnames or child apexes were left out by the %d-listener limit and %d by the wildcard certificate's %d-name limit (see status.hostnames and status.childApexes); %s", l.Listeners, MaxListeners, l.Certificate, maxCertificateDNSNames, budgetAdvice(in))
	}
	return c
}

// routesAccepted is RoutesAccepted from the causes of routeCauses: False on
// hostname conflicts, on routes no listener can take (NoMatchingParent), on
// attached namespaces another Gateway's owner marked, on hostnames
// OutsideApex or Invalid, on child apexes outside the apex. The reason is
// the first of these; the message names every one, each in its share of the
// bound. When status.hostnames is cut short, the message says so.
func routesAccepted(causes routeCauseSet, claims, listed int) Condition {
	c := routeAcceptance(causes)
	if claims > listed {
		c.Message = text.Truncate(c.Message + fmt.Sprintf(" (status.hostnames lists %d of %d claims, those not served first)", listed, claims))
	}
	return c
}

// A cause is one reason RoutesAccepted is False, with what it names: the
// first items, how many in all, and, where status remembers it (so that a
// warning is raised only when the set changes), a digest of all of them.
type cause struct {
	reason conditions.Reason
	prefix string
	items  []string
	total  int
	sep    string
	digest *lineDigest
}

// maxCauseItems bounds the items a cause collects; the message counts the
// rest.
const maxCauseItems = 100

func (c *cause) add(item string) {
	if len(c.items) < maxCauseItems {
		c.items = append(c.items, item)
	}
	c.total++
	if c.digest != nil {
		c.digest.add(item)
	}
}

// sum is the digest of every item; "" for none, or for a cause that keeps
// no digest.
func (c *cause) sum() string {
	if c.digest == nil {
		return ""
	}
	return c.digest.sum()
}

// message is the cause's prefix and items within limit bytes.
func (c *cause) message(limit int) string {
	return text.BoundedListWithin(limit, c.prefix, c.items, c.total, c.sep, "")
}

func routeAcceptance(causes routeCauseSet) Condition {
	var found []*cause
	for _, k := range causes.inOrder() {
		if k.total > 0 {
			found = append(found, k)
		}
	}
	if len(found) == 0 {
		return Condition{Type: conditions.RoutesAccepted, Status: true, Reason: conditions.ReasonAccepted, Message: "every claimed hostname is served or reported in status.hostnames"}
	}
	// Each cause gets an equal share of the bound, so that every one is
	// named however long the first is.
	share := (text.MaxMessage - (len(found)-1)*len(causeSep)) / len(found)
	parts := make([]string, 0, len(found))
	for _, k := range found {
		parts = append(parts, k.message(share))
	}
	return Condition{Type: conditions.RoutesAccepted, Reason: found[0].reason, Message: text.Truncate(strings.Join(parts, causeSep))}
}

// A routeCauseSet is every cause of RoutesAccepted, each with what it
// names (nothing when it does not apply).
type routeCauseSet struct {
	conflict, orphans, notAdmitted, unserved, outside *cause
}

// inOrder lists the causes in order of precedence.
func (s routeCauseSet) inOrder() []*cause {
	return []*cause{s.conflict, s.orphans, s.notAdmitted, s.unserved, s.outside}
}

// routeCauses collects the causes of RoutesAccepted.
func routeCauses(claims []*claim, contests []*contest, foreign []string, children []*child) routeCauseSet {
	// Every loss sorted, then bounded: the message names the first losses
	// by route, whichever hostnames they are for. Status remembers the
	// conflicts by their own digest (digests), so this cause keeps none.
	conflict := &cause{reason: conditions.ReasonHostnameConflict, prefix: "hostname conflicts: ", sep: "; "}
	for _, l := range losses(claims, contests) {
		conflict.add(l)
	}
	orphans := &cause{reason: conditions.ReasonNoMatchingParent, prefix: "routes target this Gateway but match no listener for these hostnames (see status.hostnames): ", sep: ", ", digest: newLineDigest()}
	unserved := &cause{reason: conditions.ReasonHostnamesNotServed, prefix: "hostnames that can never be served (see status.hostnames): ", sep: ", ", digest: newLineDigest()}
	last := ""
	for _, cl := range claims {
		switch cl.state {
		case v1alpha1.HostnameNoMatchingParent:
			orphans.add(fmt.Sprintf("%s (%s)", cl.route, cl.hostname))
		case v1alpha1.HostnameOutsideApex, v1alpha1.HostnameInvalid:
			// Claims are sorted by hostname: one entry per hostname.
			if item := fmt.Sprintf("%s (%s)", cl.hostname, cl.state); item != last {
				unserved.add(item)
				last = item
			}
		}
	}
	notAdmitted := &cause{reason: conditions.ReasonNamespaceNotAdmitted, prefix: "attached namespaces carry another Gateway's " + kube.LabelNamespaceGateway + " label, so their routes get no listener: ", sep: ", "}
	for _, ns := range foreign {
		notAdmitted.add(ns)
	}
	outside := &cause{reason: conditions.ReasonChildApexOutsideApex, prefix: "child tenant apexes outside the apex get no listener (see status.childApexes): ", sep: ", ", digest: newLineDigest()}
	for _, ch := range children {
		if ch.state == v1alpha1.ChildApexOutsideApex {
			outside.add(fmt.Sprintf("%s (namespace %s)", ch.apex, ch.namespace))
		}
	}
	return routeCauseSet{conflict: conflict, orphans: orphans, notAdmitted: notAdmitted, unserved: unserved, outside: outside}
}

// losses are every claim lost, sorted: to another namespace, or a
// passthrough listener shared with another route.
func losses(claims []*claim, contests []*contest) []string {
	var lost []string
	for _, ct := range contests {
		for _, l := range ct.losers {
			lost = append(lost, fmt.Sprintf("%s lost %s to %s", l, ct.hostname, ct.winner.route))
		}
	}
	for _, cl := range claims {
		if cl.duplicate {
			lost = append(lost, fmt.Sprintf("%s shares TLS passthrough listener for %s with another route of its namespace", cl.route, cl.hostname))
		}
	}
	sort.Strings(lost)
	return lost
}

// causeSep separates the causes in a message.
const causeSep = " | "
