package gateway

import (
	"fmt"
	"strings"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// Condition types the function reads, from the libraries that define them.
// A listener's ResolvedRefs is ignored where the class is Cilium's: Cilium
// leaves it False (InvalidRouteKinds) on healthy listeners that carry the
// HTTPRoute and TLSRoute kinds it needs (see Listeners in docs/design.md).
const (
	condAccepted     = string(gwapiv1.GatewayConditionAccepted)
	condProgrammed   = string(gwapiv1.GatewayConditionProgrammed)
	condResolvedRefs = string(gwapiv1.ListenerConditionResolvedRefs)
	condReady        = string(cmv1.CertificateConditionReady)
)

// A ListenerReason says why an entry of status.listeners is ready or not
// (see Status and conditions in docs/design.md). The first found applies,
// in the order below.
type ListenerReason string

// Listener reasons in status.listeners.
const (
	// ReasonListenerReady: the Gateway's controller reports the listener
	// Accepted and Programmed, and its references resolved. (The Gateway
	// API's own listener reason Ready is deprecated, reserved for future
	// use, so this one is the function's.)
	ReasonListenerReady ListenerReason = "Ready"
	// ReasonListenerPending: the observed Gateway reports no conditions for
	// the listener yet, as the Gateway API's listener reason Pending.
	ReasonListenerPending = ListenerReason(gwapiv1.ListenerReasonPending)
	// ReasonListenerNotAccepted: the listener is not Accepted.
	ReasonListenerNotAccepted ListenerReason = "NotAccepted"
	// ReasonListenerNotProgrammed: the listener is Accepted but not
	// Programmed.
	ReasonListenerNotProgrammed ListenerReason = "NotProgrammed"
	// ReasonListenerRefsNotResolved: the listener's ResolvedRefs is False
	// (ignored on Cilium's class, see above).
	ReasonListenerRefsNotResolved ListenerReason = "RefsNotResolved"
	// ReasonListenerCertificateNotReady: cert-manager reports the
	// listener's Certificate not Ready; its reason and message follow in
	// status.listeners[].message. It comes first: a Secret not issued is
	// why the Gateway's own listener conditions fail. A Certificate
	// cert-manager has said nothing about yet leaves the listener to the
	// Gateway's conditions.
	ReasonListenerCertificateNotReady ListenerReason = "CertificateNotReady"
)

// maxListenerMessage bounds status.listeners[].message.
const maxListenerMessage = 256

// ready reports whether a composed resource is ready, from what Crossplane
// observed of it and, for the Gateway, the status of its judged listeners
// (judgedListeners). A resource not observed yet is not ready.
func ready(key string, o *kube.ObservedResource, listeners []v1alpha1.ListenerStatus) bool {
	if o == nil {
		return false
	}
	switch {
	case key == KeyGateway:
		if staleStatus(o) > 0 || o.Conditions[condAccepted] != statusTrue || o.Conditions[condProgrammed] != statusTrue {
			return false
		}
		for _, l := range listeners {
			if !l.Ready {
				return false
			}
		}
		return true
	case key == KeyRedirect, isReportKey(key):
		// A route report tells tenants; the Gateway does not wait for it.
		return true
	case isNamespaceKey(key), isZoneGuardKey(key):
		// A zone guard is part of the isolation the Gateway gives: one
		// the provider cannot write (RBAC names only the Tenants' guard)
		// shows as an unready resource.
		return kube.ObjectReady(o)
	default: // Issuer and Certificates.
		return o.Conditions[condReady] == statusTrue
	}
}

// listenerReadiness judges one listener from its conditions on the observed
// Gateway (nil when it reports none) and its observed Certificate (nil when
// it has none, or Crossplane has not observed it).
func listenerReadiness(in *Input, conds map[string]string, cert *kube.ObservedResource) (bool, ListenerReason, string) {
	certReady, certSaid := "", false
	if cert != nil {
		certReady, certSaid = cert.Conditions[condReady]
	}
	switch {
	case certSaid && certReady != statusTrue:
		msg := text.TruncateTo(strings.TrimPrefix(controllerSays(cert, condReady), ": "), maxListenerMessage)
		if msg == "" {
			msg = "Ready=" + certReady
		}
		return false, ReasonListenerCertificateNotReady, msg
	case conds == nil:
		return false, ReasonListenerPending, ""
	case conds[condAccepted] != statusTrue:
		return false, ReasonListenerNotAccepted, ""
	case conds[condProgrammed] != statusTrue:
		return false, ReasonListenerNotProgrammed, ""
	case conds[condResolvedRefs] == statusFalse && !ciliumQuirk(in):
		return false, ReasonListenerRefsNotResolved, ""
	}
	return true, ReasonListenerReady, ""
}

// listenerCertificateKey is the composition resource name of the
// Certificate a listener serves, or "": its own in http01, the wildcard one
// in dns01, none in existingSecret and edge or for a listener without TLS
// termination.
func listenerCertificateKey(in *Input, l gwapiv1.Listener) string {
	if l.Protocol != gwapiv1.HTTPSProtocolType {
		return ""
	}
	switch in.Spec.CertMode {
	case v1alpha1.CertModeHTTP01:
		return CertificateKey(string(l.Name))
	case v1alpha1.CertModeDNS01:
		return KeyCertificateWildcard
	}
	return ""
}

// listenerStatus mirrors each listener of the Gateway, in Gateway order,
// with its readiness from the observed Gateway status.
func listenerStatus(in *Input, listeners []gwapiv1.Listener, gw *kube.ObservedResource) []v1alpha1.ListenerStatus {
	out := make([]v1alpha1.ListenerStatus, 0, len(listeners))
	for _, l := range listeners {
		s := v1alpha1.ListenerStatus{Name: string(l.Name), Port: l.Port}
		if l.Hostname != nil {
			s.Hostname = string(*l.Hostname)
		}
		if l.TLS != nil && len(l.TLS.CertificateRefs) > 0 {
			s.CertificateName = string(l.TLS.CertificateRefs[0].Name)
		}
		var conds map[string]string
		var stale int64
		if gw != nil {
			// Conditions of an older generation than the Gateway's are
			// not judged: the listener is Pending until its controller
			// has seen the spec (Status and conditions in docs/design.md).
			if stale = staleListener(gw, string(l.Name)); stale == 0 {
				conds = gw.Listeners[string(l.Name)]
			}
		}
		var reason ListenerReason
		s.Ready, reason, s.Message = listenerReadiness(in, conds, in.Observed[listenerCertificateKey(in, l)])
		s.Reason = string(reason)
		if reason == ReasonListenerPending && stale > 0 {
			s.Message = fmt.Sprintf("its controller reported on generation %d of the Gateway, which is at %d", stale, gw.Generation)
		}
		out = append(out, s)
	}
	return out
}

// judgedListeners are the listeners whose readiness counts for GatewayReady
// and the Gateway's readiness: those the observed Gateway has in its spec,
// and those the last run already reported. A listener this run adds is
// Pending in status.listeners but judged from the next run on: until
// Crossplane applies it there is nothing of it for a controller to judge,
// and judging it would flip GatewayReady, and write the XR's status, once
// more for every new hostname (see Calls per reconcile in
// docs/design.md). One the last run reported that the Gateway still lacks
// is an apply that did not land, and is judged (Pending).
func judgedListeners(in *Input, ls []v1alpha1.ListenerStatus) []v1alpha1.ListenerStatus {
	gw := in.Observed[KeyGateway]
	if gw == nil {
		return ls
	}
	out := make([]v1alpha1.ListenerStatus, 0, len(ls))
	for _, l := range ls {
		_, applied := gw.ListenerHostnames[l.Name]
		_, reported := in.Previous.Listeners[l.Name]
		if applied || reported {
			out = append(out, l)
		}
	}
	return out
}
