package gateway

import (
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// Gateway and listener condition types the function reads. ResolvedRefs is
// ignored on purpose: some implementations leave it False on healthy TLS
// listeners (Cilium reports InvalidRouteKinds for KINDS-443).
const (
	condAccepted   = "Accepted"
	condProgrammed = "Programmed"
	condReady      = "Ready"
	condSynced     = "Synced"
)

// Listener reasons in status.listeners.
const (
	ReasonListenerReady         = "Ready"
	ReasonListenerPending       = "Pending"
	ReasonListenerNotAccepted   = "NotAccepted"
	ReasonListenerNotProgrammed = "NotProgrammed"
)

// ready reports whether a composed resource is ready, from what Crossplane
// observed of it. A resource not observed yet is not ready.
func ready(key string, o *ObservedResource, listeners []gwapiv1.Listener) bool {
	if o == nil {
		return false
	}
	switch {
	case key == KeyGateway:
		if o.Conditions[condAccepted] != statusTrue || o.Conditions[condProgrammed] != statusTrue {
			return false
		}
		for _, l := range listenerStatus(listeners, o) {
			if !l.Ready {
				return false
			}
		}
		return true
	case key == KeyRedirect:
		return true
	case isNamespaceKey(key):
		return o.Conditions[condReady] == statusTrue && o.Conditions[condSynced] == statusTrue
	default: // Issuer and Certificates.
		return o.Conditions[condReady] == statusTrue
	}
}

// listenerStatus mirrors each listener of the Gateway, in Gateway order,
// with its readiness from the observed Gateway status.
func listenerStatus(listeners []gwapiv1.Listener, gw *ObservedResource) []v1alpha1.ListenerStatus {
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
		if gw != nil {
			conds = gw.Listeners[string(l.Name)]
		}
		switch {
		case conds == nil:
			s.Reason = ReasonListenerPending
		case conds[condAccepted] != statusTrue:
			s.Reason = ReasonListenerNotAccepted
		case conds[condProgrammed] != statusTrue:
			s.Reason = ReasonListenerNotProgrammed
		default:
			s.Ready, s.Reason = true, ReasonListenerReady
		}
		out = append(out, s)
	}
	return out
}
