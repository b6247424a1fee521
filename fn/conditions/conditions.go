// Package conditions names the conditions the function sets on a
// TenantGateway and the reasons it gives for them: the TenantGateway's status
// API, which fn/gateway writes, and which fn/tenant reads back from the
// TenantGateway a Tenant composes (and the edge and the tests of both judge).
// Naming them apart from fn/gateway lets the readers use the names without
// depending on the computation that writes them.
package conditions

import (
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// A Type is a condition the function sets on a TenantGateway.
// Crossplane owns Ready and Synced on the XR, so the function reports its
// own findings under these (see Status and conditions in docs/design.md).
type Type string

// Condition types.
const (
	// GatewayReady is True when the Gateway is accepted,
	// programmed and every listener ready.
	GatewayReady Type = "GatewayReady"
	// ListenersReady is False when a limit (64 listeners, 100
	// certificate names) left hostnames or child apexes out.
	ListenersReady Type = "ListenersReady"
	// RoutesAccepted is False when routes lost a hostname, match
	// no listener, or come from a namespace that is not admitted.
	RoutesAccepted Type = "RoutesAccepted"
)

// A Reason says why a condition has its status.
type Reason string

// Reasons of GatewayReady, in the order the first problem found is
// reported (see Status and conditions in docs/design.md).
const (
	// ReasonReconcileError: the ownership guard refused objects the
	// TenantGateway needs; the message names each.
	ReasonReconcileError Reason = "ReconcileError"
	// ReasonGatewayClassNotFound: spec.gatewayClassName names no
	// GatewayClass, so no controller will ever accept the Gateway.
	ReasonGatewayClassNotFound Reason = "GatewayClassNotFound"
	// ReasonGatewayClassUnsupported: passthrough listeners on a class that
	// lists its supported features without TLSRoute.
	ReasonGatewayClassUnsupported Reason = "GatewayClassUnsupported"
	// ReasonGatewayNotAccepted: the Gateway is not Accepted (not observed
	// yet, or its controller refused it; its reason and message follow).
	ReasonGatewayNotAccepted Reason = "GatewayNotAccepted"
	// ReasonGatewayStatusStale: the Gateway's Accepted or Programmed
	// condition carries an observedGeneration older than the Gateway's: its
	// controller has not seen the spec last applied (it is down, or behind).
	ReasonGatewayStatusStale Reason = "GatewayStatusStale"
	// ReasonGatewayNotProgrammed: the Gateway is Accepted but not
	// Programmed; the message carries the controller's reason and message
	// (AddressNotAssigned while a LoadBalancer is pending).
	ReasonGatewayNotProgrammed Reason = "GatewayNotProgrammed"
	// ReasonListenersNotReady: listeners are not ready; the message names
	// each with its status.listeners reason, and for CertificateNotReady
	// cert-manager's reason and message.
	ReasonListenersNotReady Reason = "ListenersNotReady"
	// ReasonReconciled: the Gateway is programmed and every listener ready.
	ReasonReconciled Reason = "Reconciled"
)

// Reasons of ListenersReady.
const (
	// ReasonListenerLimitExceeded: the MaxListeners budget left hostnames
	// or child apexes out (with or without the certificate's limit); the
	// message counts each limit's and advises for the mode.
	ReasonListenerLimitExceeded Reason = "ListenerLimitExceeded"
	// ReasonCertificateNameLimitExceeded: only the dns01 wildcard
	// certificate's limit of names left child apexes out.
	ReasonCertificateNameLimitExceeded Reason = "CertificateNameLimitExceeded"
	// ReasonListenersFit: every hostname and child apex has its listener.
	ReasonListenersFit Reason = "ListenersFit"
	// ReasonCertificateOrdersWaiting: nothing was left out by a limit, but
	// hostnames or child apexes wait for the ACME order budget.
	ReasonCertificateOrdersWaiting Reason = "CertificateOrdersWaiting"
)

// Reasons of RoutesAccepted, in order of precedence: the reason is the
// first cause found, and the message names every cause found, each
// bounded (see Status and conditions in docs/design.md).
const (
	// ReasonHostnameConflict: routes lost hostnames to other namespaces.
	ReasonHostnameConflict Reason = "HostnameConflict"
	// ReasonNoMatchingParent: routes match no listener for hostnames
	// (their kind, or their sectionName or port), the Gateway API's route
	// reason of the same name.
	ReasonNoMatchingParent = Reason(gwapiv1.RouteReasonNoMatchingParent)
	// ReasonNamespaceNotAdmitted: attached namespaces carry another
	// Gateway's label, so their routes get no listener.
	ReasonNamespaceNotAdmitted Reason = "NamespaceNotAdmitted"
	// ReasonHostnamesNotServed: claimed hostnames are OutsideApex or
	// Invalid; the message names them.
	ReasonHostnamesNotServed Reason = "HostnamesNotServed"
	// ReasonChildApexOutsideApex: child tenant apexes are not under the
	// apex, so they get no listener; the message names them.
	ReasonChildApexOutsideApex Reason = "ChildApexOutsideApex"
	// ReasonAccepted: every claimed hostname is served or reported, the
	// Gateway API's route reason Accepted.
	ReasonAccepted = Reason(gwapiv1.RouteReasonAccepted)
)
