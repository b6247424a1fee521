package gateway

import (
	"fmt"
	"strings"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/conditions"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// Warning events: Crossplane turns every warning into an event and
// rate-limits events per object, so a warning is raised only when what it
// is about changed since the last run, at most one per kind per run, each
// bounded like every other message (see Status and conditions in
// docs/design.md). Status lists are cut short, so changes are told by
// digests of the whole sets, which status.digests remembers.

// A findings is what this run's warnings are drawn from.
type findings struct {
	contests []*contest
	leftOut  leftOutSet
	causes   routeCauseSet
	refused  []string
	// repeated are the spec's repeated list entries (withoutRepeats).
	repeated []string
	// gatewayReady is this run's GatewayReady.
	gatewayReady Condition
}

// warnedGatewayReasons are the GatewayReady causes about the class or the
// Gateway's programming that warn when they appear or change; the others
// are a Gateway being created, or the listeners, warned about apart.
var warnedGatewayReasons = map[conditions.Reason]bool{
	conditions.ReasonGatewayClassNotFound:    true,
	conditions.ReasonGatewayClassUnsupported: true,
	conditions.ReasonGatewayNotProgrammed:    true,
}

// digestsOf are the digests status remembers of this run's findings.
func digestsOf(in *Input, f findings, listeners []v1alpha1.ListenerStatus) v1alpha1.StatusDigests {
	d := digests(f.contests, f.leftOut)
	d.Refused = digestLines(f.refused)
	d.Repeated = digestLines(f.repeated)
	if warnedGatewayReasons[f.gatewayReady.Reason] {
		d.Gateway = digestLines([]string{string(f.gatewayReady.Reason), gatewayCauseKey(in, f.gatewayReady.Reason)})
	}
	var certs []string
	for _, l := range listeners {
		if ListenerReason(l.Reason) == ReasonListenerCertificateNotReady {
			certs = append(certs, l.Name+" "+certificateReason(l))
		}
	}
	d.Certificates = digestLines(certs)
	d.NoMatchingParent = f.causes.orphans.sum()
	d.NotServed = f.causes.unserved.sum()
	d.ChildApexesOutside = f.causes.outside.sum()
	return d
}

// gatewayCauseKey identifies a GatewayReady cause: the class, or the
// controller's reason, never its message (a message with a counter or a
// time in it would warn on every run).
func gatewayCauseKey(in *Input, r conditions.Reason) string {
	if r == conditions.ReasonGatewayNotProgrammed {
		if gw := in.Observed[KeyGateway]; gw != nil {
			return gw.Reasons[condProgrammed]
		}
		return ""
	}
	return in.Spec.GatewayClassName
}

// certificateReason is cert-manager's reason in a listener's message.
func certificateReason(l v1alpha1.ListenerStatus) string {
	reason, _, _ := strings.Cut(l.Message, ":")
	return reason
}

// digestLines is the digest of the lines; "" for none.
func digestLines(lines []string) string {
	d := newLineDigest()
	for _, l := range lines {
		d.add(l)
	}
	return d.sum()
}

// warnings are the Warning events of this run: one per finding whose
// digest is set and differs from the last run's, and one when the Gateway
// comes close to the listener limit from the served listeners.
func warnings(in *Input, f findings, out *Output, served servedListeners) []string {
	w := gatewayWarnings(in.Previous.Digests, f, out)
	if changed(out.Digests.Repeated, in.Previous.Digests.Repeated) {
		w = append(w, text.BoundedList(fmt.Sprintf("the spec repeats %d list entries, each used once (remove the repeats): ", len(f.repeated)), f.repeated, "; ", ""))
	}
	w = append(w, routeWarnings(in.Previous.Digests, f, out.Digests)...)
	if out.Listeners > WarnListeners && len(served) <= WarnListeners {
		w = append(w, fmt.Sprintf("Gateway %s/%s now has %d listeners, close to the limit of %d; %s", in.Namespace, in.Name, out.Listeners, MaxListeners, budgetAdvice(in)))
	}
	return w
}

// changed reports whether a set is there now and was not, or was another.
func changed(now, prev string) bool { return now != "" && now != prev }

// gatewayWarnings are about the objects the TenantGateway needs: refused,
// the class, the Gateway's programming, the certificates.
func gatewayWarnings(prev v1alpha1.StatusDigests, f findings, out *Output) []string {
	now := out.Digests
	var w []string
	if changed(now.Refused, prev.Refused) {
		w = append(w, text.BoundedList(fmt.Sprintf("the ownership guard refuses %d objects the TenantGateway needs, so it is not Ready: ", len(f.refused)), f.refused, "; ", ""))
	}
	if changed(now.Gateway, prev.Gateway) {
		w = append(w, text.Truncate(string(f.gatewayReady.Reason)+": "+f.gatewayReady.Message))
	}
	if changed(now.Certificates, prev.Certificates) {
		var bad []string
		for _, l := range out.ListenerStatus {
			if ListenerReason(l.Reason) == ReasonListenerCertificateNotReady {
				bad = append(bad, listenerCause(l))
			}
		}
		w = append(w, text.BoundedList(fmt.Sprintf("certificates not ready changed; %d listeners wait for theirs: ", len(bad)), bad, ", ", ""))
	}
	return w
}

// routeWarnings are about the claims and child apexes.
func routeWarnings(prev v1alpha1.StatusDigests, f findings, now v1alpha1.StatusDigests) []string {
	var w []string
	if changed(now.Conflicts, prev.Conflicts) {
		w = append(w, text.BoundedList(fmt.Sprintf("hostname conflicts changed; %d contested now: ", len(f.contests)), conflictLines(f.contests), "; ", ""))
	}
	for _, c := range []struct {
		now, prev string
		cause     *cause
		what      string
	}{
		{now.NoMatchingParent, prev.NoMatchingParent, f.causes.orphans, "routes matching no listener"},
		{now.NotServed, prev.NotServed, f.causes.unserved, "hostnames that can never be served"},
		{now.ChildApexesOutside, prev.ChildApexesOutside, f.causes.outside, "child tenant apexes outside the apex"},
	} {
		if changed(c.now, c.prev) {
			w = append(w, text.BoundedListOf(fmt.Sprintf("%s changed; %d now: ", c.what, c.cause.total), c.cause.items, c.cause.total, c.cause.sep, ""))
		}
	}
	if changed(now.LeftOut, prev.LeftOut) {
		w = append(w, text.BoundedListOf(fmt.Sprintf("hostnames and child apexes left out changed; %d left out now: ", f.leftOut.counts.Total()), f.leftOut.first, f.leftOut.counts.Total(), ", ", ""))
	}
	return w
}
