package gateway

import (
	"fmt"
	"sort"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// Custom condition types. Crossplane owns Ready and Synced on the XR, so the
// function reports its own findings under these.
const (
	ConditionGatewayReady   = "GatewayReady"
	ConditionListenersReady = "ListenersReady"
	ConditionRoutesAccepted = "RoutesAccepted"
)

// Condition reasons.
const (
	ReasonReconciled              = "Reconciled"
	ReasonReconcileError          = "ReconcileError"
	ReasonGatewayClassUnsupported = "GatewayClassUnsupported"
	ReasonGatewayNotAccepted      = "GatewayNotAccepted"
	ReasonGatewayNotProgrammed    = "GatewayNotProgrammed"
	ReasonListenersNotReady       = "ListenersNotReady"
	ReasonListenerLimitExceeded   = "ListenerLimitExceeded"
	ReasonListenersFit            = "ListenersFit"
	ReasonHostnameConflict        = "HostnameConflict"
	ReasonNoMatchingParent        = "NoMatchingParent"
	ReasonAccepted                = "Accepted"
)

// A Condition the function sets on the XR.
type Condition struct {
	Type    string
	Status  bool
	Reason  string
	Message string
}

// featureTLSRoute is the supported feature passthrough listeners need.
const featureTLSRoute = "TLSRoute"

// gatewayReady is GatewayReady: False with the first problem found, in the
// order of SPEC §6.4, else True.
func gatewayReady(in *Input, refused []string, listeners []gwapiv1.Listener, ls []v1alpha1.ListenerStatus) Condition {
	gw := in.Observed[KeyGateway]
	name := in.Namespace + "/" + in.Name
	c := Condition{Type: ConditionGatewayReady}
	switch {
	case len(refused) > 0:
		c.Reason, c.Message = ReasonReconcileError, strings.Join(refused, "; ")
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
			c.Message = fmt.Sprintf("Gateway %s has %d of %d listeners not ready: %s (see status.listeners)", name, len(bad), len(ls), strings.Join(bad, ", "))
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

// listenersReady is ListenersReady: False when the budget left hostnames or
// child apexes out.
func listenersReady(leftOut int) Condition {
	if leftOut == 0 {
		return Condition{Type: ConditionListenersReady, Status: true, Reason: ReasonListenersFit, Message: fmt.Sprintf("every hostname fits within the %d-listener limit", MaxListeners)}
	}
	return Condition{Type: ConditionListenersReady, Reason: ReasonListenerLimitExceeded, Message: fmt.Sprintf(
		"%d hostnames or child apexes were left out: a Gateway holds at most %d listeners (see status.hostnames and status.childApexes); certMode dns01 serves every hostname under the apex with a fixed set of listeners", leftOut, MaxListeners)}
}

// routesAccepted is RoutesAccepted: False on hostname conflicts, or on
// TLSRoutes an edge Gateway cannot serve. When status.hostnames is cut
// short, its message says so.
func routesAccepted(claims []*claim, contests []*contest) Condition {
	c := routeAcceptance(claims, contests)
	if len(claims) > MaxHostnameStatus {
		c.Message += fmt.Sprintf(" (status.hostnames lists %d of %d claims, those not served first)", MaxHostnameStatus, len(claims))
	}
	return c
}

func routeAcceptance(claims []*claim, contests []*contest) Condition {
	c := Condition{Type: ConditionRoutesAccepted}
	if len(contests) > 0 {
		var lost []string
		for _, ct := range contests {
			for _, l := range ct.losers {
				lost = append(lost, fmt.Sprintf("%s lost %s to %s", l, ct.hostname, ct.winner.route))
			}
		}
		sort.Strings(lost)
		c.Reason, c.Message = ReasonHostnameConflict, "hostname conflicts: "+strings.Join(lost, "; ")
		return c
	}
	var orphans []string
	for _, cl := range claims {
		if cl.noParent {
			orphans = append(orphans, fmt.Sprintf("%s (%s)", cl.route, cl.hostname))
		}
	}
	if len(orphans) > 0 {
		c.Reason = ReasonNoMatchingParent
		c.Message = "TLSRoutes target this edge Gateway but match none of its plain-HTTP listeners: " + strings.Join(orphans, ", ")
		return c
	}
	c.Status, c.Reason, c.Message = true, ReasonAccepted, "every claimed hostname is served or reported in status.hostnames"
	return c
}

// warnings are the Warning events of this run: only what changed since the
// last one (a new conflict, a hostname newly left out, the Gateway passing
// 56 listeners), because Crossplane turns every warning into an event and
// rate-limits events per object.
func warnings(in *Input, claims []*claim, contests []*contest, listeners int) []string {
	var out []string
	for _, ct := range contests {
		losers := strings.Join(ct.losers, ",")
		if in.Previous.Conflicts[ct.hostname] != losers {
			out = append(out, fmt.Sprintf("hostname %s is claimed from several namespaces: %s keeps it, %s refused", ct.hostname, ct.winner.route, strings.Join(ct.losers, ", ")))
		}
	}
	var newly []string
	seen := map[string]bool{}
	for _, c := range claims {
		if c.state == v1alpha1.HostnameOverListenerLimit && !in.Previous.LeftOut[c.hostname] && !seen[c.hostname] {
			seen[c.hostname] = true
			newly = append(newly, c.hostname)
		}
	}
	if len(newly) > 0 {
		out = append(out, fmt.Sprintf("%d hostnames newly left out by the %d-listener limit: %s", len(newly), MaxListeners, strings.Join(newly, ", ")))
	}
	if listeners > WarnListeners && len(in.served) <= WarnListeners {
		out = append(out, fmt.Sprintf("Gateway %s/%s now has %d listeners, close to the limit of %d; consider certMode dns01", in.Namespace, in.Name, listeners, MaxListeners))
	}
	return out
}
