package gateway

import (
	"fmt"
	"sort"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// A ConditionType is a condition the function sets on a TenantGateway.
// Crossplane owns Ready and Synced on the XR, so the function reports its
// own findings under these (see Status and conditions in docs/design.md).
type ConditionType string

// Condition types.
const (
	// ConditionGatewayReady is True when the Gateway is accepted,
	// programmed and every listener ready.
	ConditionGatewayReady ConditionType = "GatewayReady"
	// ConditionListenersReady is False when a limit (64 listeners, 100
	// certificate names) left hostnames or child apexes out.
	ConditionListenersReady ConditionType = "ListenersReady"
	// ConditionRoutesAccepted is False when routes lost a hostname, match
	// no listener, or come from a namespace that is not admitted.
	ConditionRoutesAccepted ConditionType = "RoutesAccepted"
)

// A ConditionReason says why a condition has its status.
type ConditionReason string

// Reasons of GatewayReady, in the order the first problem found is
// reported.
const (
	ReasonReconcileError          ConditionReason = "ReconcileError"
	ReasonGatewayClassUnsupported ConditionReason = "GatewayClassUnsupported"
	ReasonGatewayNotAccepted      ConditionReason = "GatewayNotAccepted"
	ReasonGatewayNotProgrammed    ConditionReason = "GatewayNotProgrammed"
	ReasonListenersNotReady       ConditionReason = "ListenersNotReady"
	ReasonReconciled              ConditionReason = "Reconciled"
)

// Reasons of ListenersReady.
const (
	ReasonListenerLimitExceeded        ConditionReason = "ListenerLimitExceeded"
	ReasonCertificateNameLimitExceeded ConditionReason = "CertificateNameLimitExceeded"
	ReasonListenersFit                 ConditionReason = "ListenersFit"
)

// Reasons of RoutesAccepted, in the order the first problem found is
// reported.
const (
	ReasonHostnameConflict     ConditionReason = "HostnameConflict"
	ReasonNoMatchingParent     ConditionReason = "NoMatchingParent"
	ReasonNamespaceNotAdmitted ConditionReason = "NamespaceNotAdmitted"
	ReasonAccepted             ConditionReason = "Accepted"
)

// A Condition the function sets on the XR.
type Condition struct {
	Type    ConditionType
	Status  bool
	Reason  ConditionReason
	Message string
}

// featureTLSRoute is the supported feature passthrough listeners need.
const featureTLSRoute = "TLSRoute"

// gatewayReady is GatewayReady: False with the first problem found, in the
// order of Status and conditions in docs/design.md, else True.
func gatewayReady(in *Input, refused []string, listeners []gwapiv1.Listener, ls []v1alpha1.ListenerStatus) Condition {
	gw := in.Observed[KeyGateway]
	name := in.Namespace + "/" + in.Name
	c := Condition{Type: ConditionGatewayReady}
	switch {
	case len(refused) > 0:
		c.Reason, c.Message = ReasonReconcileError, BoundedList("", refused, "; ", "")
	case classLacksTLSRoute(in, listeners):
		c.Reason = ReasonGatewayClassUnsupported
		c.Message = fmt.Sprintf("GatewayClass %s lists its supported features but not TLSRoute, so nothing would serve the TLS passthrough listeners of Gateway %s", in.GatewayClass.Name, name)
	case gw == nil || gw.Conditions[condAccepted] != statusTrue:
		c.Reason, c.Message = ReasonGatewayNotAccepted, fmt.Sprintf("Underlying Gateway %s has not been accepted by its controller yet", name)
	case gw.Conditions[condProgrammed] != statusTrue:
		c.Reason, c.Message = ReasonGatewayNotProgrammed, fmt.Sprintf("Underlying Gateway %s has not been programmed by its controller yet", name)
	default:
		var bad []string
		for _, l := range ls {
			if !l.Ready {
				bad = append(bad, l.Name+" ("+l.Reason+")")
			}
		}
		if len(bad) > 0 {
			c.Reason = ReasonListenersNotReady
			c.Message = BoundedList(fmt.Sprintf("Gateway %s has %d of %d listeners not ready: ", name, len(bad), len(ls)), bad, ", ", " (see status.listeners)")
			break
		}
		c.Status, c.Reason = true, ReasonReconciled
		c.Message = fmt.Sprintf("Gateway %s programmed with %d listeners", name, len(ls))
	}
	return c
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
	for _, f := range in.GatewayClass.SupportedFeatures {
		if f == featureTLSRoute {
			return false
		}
	}
	return true
}

// listenersReady is ListenersReady: False when a limit left hostnames or
// child apexes out, naming the limit that binds and advice for the mode.
func listenersReady(in *Input, l LeftOut) Condition {
	c := Condition{Type: ConditionListenersReady}
	switch {
	case l.Total() == 0:
		c.Status, c.Reason, c.Message = true, ReasonListenersFit, fmt.Sprintf("every hostname fits within the %d-listener limit", MaxListeners)
	case l.Certificate == 0:
		c.Reason = ReasonListenerLimitExceeded
		c.Message = fmt.Sprintf("%d hostnames or child apexes were left out: a Gateway holds at most %d listeners (see status.hostnames and status.childApexes); %s", l.Listeners, MaxListeners, budgetAdvice(in))
	case l.Listeners == 0:
		c.Reason = ReasonCertificateNameLimitExceeded
		c.Message = fmt.Sprintf("%d hostnames or child apexes were left out of the wildcard certificate: the ACME CA issues at most %d names per certificate (see status.childApexes); give large child tenants a Gateway of their own", l.Certificate, maxCertificateDNSNames)
	default:
		c.Reason = ReasonListenerLimitExceeded
		c.Message = fmt.Sprintf("%d hostnames or child apexes were left out by the %d-listener limit and %d by the wildcard certificate's %d-name limit (see status.hostnames and status.childApexes); %s", l.Listeners, MaxListeners, l.Certificate, maxCertificateDNSNames, budgetAdvice(in))
	}
	return c
}

// routesAccepted is RoutesAccepted: False on hostname conflicts, on routes
// no listener can take (NoMatchingParent), or on attached namespaces another
// Gateway's owner marked. When status.hostnames is cut short, its message says so.
func routesAccepted(claims []*claim, listed int, contests []*contest, foreign []string) Condition {
	c := routeAcceptance(claims, contests, foreign)
	if len(claims) > listed {
		c.Message = truncate(c.Message + fmt.Sprintf(" (status.hostnames lists %d of %d claims, those not served first)", listed, len(claims)))
	}
	return c
}

func routeAcceptance(claims []*claim, contests []*contest, foreign []string) Condition {
	c := Condition{Type: ConditionRoutesAccepted}
	if len(contests) > 0 {
		var lost []string
		for _, ct := range contests {
			for _, l := range ct.losers {
				lost = append(lost, fmt.Sprintf("%s lost %s to %s", l, ct.hostname, ct.winner.route))
			}
		}
		sort.Strings(lost)
		c.Reason, c.Message = ReasonHostnameConflict, BoundedList("hostname conflicts: ", lost, "; ", "")
		return c
	}
	var orphans []string
	for _, cl := range claims {
		if cl.state == v1alpha1.HostnameNoMatchingParent {
			orphans = append(orphans, fmt.Sprintf("%s (%s)", cl.route, cl.hostname))
		}
	}
	if len(orphans) > 0 {
		c.Reason = ReasonNoMatchingParent
		c.Message = BoundedList("routes target this Gateway but match no listener for these hostnames (a sectionName or port that selects no listener taking the hostname; a TLSRoute needs a TLS passthrough listener; an HTTPRoute cannot take a passthrough hostname; see status.hostnames): ", orphans, ", ", "")
		return c
	}
	if len(foreign) > 0 {
		c.Reason = ReasonNamespaceNotAdmitted
		c.Message = BoundedList("attached namespaces carry another Gateway's "+LabelNamespaceGateway+" label, so their routes get no listener: ", foreign, ", ", "")
		return c
	}
	c.Status, c.Reason, c.Message = true, ReasonAccepted, "every claimed hostname is served or reported in status.hostnames"
	return c
}

// warnings are the Warning events of this run: at most one per kind, each
// bounded, and only when what it is about changed since the last run (a
// conflict, a hostname or child apex left out, the Gateway passing 56
// listeners), because Crossplane turns every warning into an event and
// rate-limits events per object. Status lists are cut short, so changes are
// told by digests of the whole sets.
func warnings(in *Input, contests []*contest, leftOut leftOutSet, out *Output) []string {
	var w []string
	if d := out.Digests.Conflicts; d != "" && d != in.Previous.Digests.Conflicts {
		w = append(w, BoundedList(fmt.Sprintf("hostname conflicts changed; %d contested now: ", len(contests)), conflictLines(contests), "; ", ""))
	}
	if d := out.Digests.LeftOut; d != "" && d != in.Previous.Digests.LeftOut {
		w = append(w, boundedListOf(fmt.Sprintf("hostnames and child apexes left out changed; %d left out now: ", leftOut.counts.Total()), leftOut.first, leftOut.counts.Total(), ", ", ""))
	}
	if out.Listeners > WarnListeners && len(in.served) <= WarnListeners {
		w = append(w, fmt.Sprintf("Gateway %s/%s now has %d listeners, close to the limit of %d; %s", in.Namespace, in.Name, out.Listeners, MaxListeners, budgetAdvice(in)))
	}
	return w
}
