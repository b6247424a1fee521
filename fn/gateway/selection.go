package gateway

import (
	"fmt"
	"strings"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// Listener selection: a parentRef naming a listener (sectionName) attaches
// only to that listener, one naming a port only to listeners on that port,
// and one naming both only to a listener matching both, as the Gateway API
// says. Listener names are the function's own, so a route can name only a
// listener the function chose; a claim counts only when one of its route's
// parentRefs selects the listener that takes its hostname (see Listener
// selection in docs/design.md).

// Ports the function's listeners use.
const (
	portHTTP  = 80
	portHTTPS = 443
)

// servingPort is the port the claim's hostname is served on: 443, or 80 on
// an edge Gateway, where TLS ends in front of it.
func servingPort(in *Input) int32 {
	if in.Spec.CertMode == v1alpha1.CertModeEdge {
		return portHTTP
	}
	return portHTTPS
}

// selects reports whether a parentRef selects a listener of this name and
// port.
func (p ParentRef) selects(listener string, port int32) bool {
	return (p.SectionName == "" || p.SectionName == listener) && (p.Port == 0 || p.Port == port)
}

// unselected says why no parentRef of the claim's route can select a
// listener that may take its hostname, or "". It is judged before conflicts
// and listeners, from the names the function can give a listener for the
// hostname (mayTake), so that a claim no listener can take competes for
// nothing and makes no listener or Certificate. Whether the listener that
// does take the hostname is selected is judged once the listeners are
// planned (misselected).
func unselected(in *Input, c *claim) string {
	port := servingPort(in)
	for _, p := range c.refs {
		if (p.Port == 0 || p.Port == port) && (p.SectionName == "" || mayTake(in, c, p.SectionName)) {
			return ""
		}
	}
	return fmt.Sprintf("its parentRefs (%s) select no listener that can take %s: this route matches no listener for it (NoMatchingParent); those that can are on port %d, named after the hostname, the apex or a child apex (see status.listeners), and a parentRef without sectionName and port attaches wherever it is admitted%s",
		describeRefs(c.refs), c.hostname, port, httpNote(in, c))
}

// mayTake reports whether a listener of this name can take the claim's
// hostname in this mode: the passthrough listener of a passthrough hostname;
// the hostname's own listener (http01) or pin, in its short, long or hash
// form;
// the apex listener for the apex; the wildcard listener, a child apex's, or
// a wildcard pin, for a name under it.
func mayTake(in *Input, c *claim, name string) bool {
	if c.kind == KindTLSRoute {
		return name == c.passthrough
	}
	h, apex := c.hostname, in.Spec.Apex
	if namesPin(in, name, h) {
		return true
	}
	if in.Spec.CertMode == v1alpha1.CertModeHTTP01 {
		return false
	}
	if wildcardPinMayTake(in, h, name) {
		return true
	}
	wild, apexName := ListenerHTTPS, ListenerHTTPSApex
	if in.Spec.CertMode == v1alpha1.CertModeEdge {
		wild, apexName = ListenerEdge, ListenerEdgeApex
	}
	switch name {
	case apexName:
		return h == apex
	case wild:
		return h != apex && under(h, apex)
	}
	return childMayTake(in, h, name)
}

// wildcardPinMayTake reports whether a listener of this name is the pin of
// a wildcard above h. A route naming it attaches there and lists h in its
// table whatever its claim says: judged NoMatchingParent, the claim would
// compete for nothing, so no pin or exclusion would keep a rival's listing
// of h off another listener, and a shared table (an edge Gateway's port 80)
// would list h twice.
func wildcardPinMayTake(in *Input, h, name string) bool {
	found := false
	eachDomain(parent(base(h)), func(d string) bool {
		if d == in.Spec.Apex || !under(d, in.Spec.Apex) {
			return true // *.<apex> is the wildcard listener, not a pin
		}
		found = namesPin(in, name, "*."+d)
		return found
	})
	return found
}

// childMayTake reports whether a listener of this name is the listener of
// a child apex that h is strictly under (a child apex's wildcard listener
// takes the names under it).
func childMayTake(in *Input, h, name string) bool {
	rest, ok := strings.CutPrefix(name, childPrefix(in.Spec.CertMode))
	if !ok {
		return false
	}
	found := false
	eachDomain(parent(base(h)), func(d string) bool {
		if d == in.Spec.Apex {
			return true // the apex has no child listener
		}
		found = rest == HostKey(d) || rest == LongHostKey(d) || rest == HashHostKey(d)
		return found
	})
	return found
}

// httpNote explains a route that names the http listener, which serves no
// HTTPS: the owner's route is served in plain HTTP on port 80 (see The
// owner on port 80 in docs/design.md), any other namespace's is refused.
func httpNote(in *Input, c *claim) string {
	named := false
	for _, p := range c.refs {
		named = named || p.SectionName == ListenerHTTP || (p.SectionName == "" && p.Port == portHTTP)
	}
	switch {
	case !named || in.Spec.CertMode == v1alpha1.CertModeEdge:
		return ""
	case c.namespace == in.Namespace:
		return "; listener http (port 80) serves no HTTPS: there this route answers plain HTTP ahead of the redirect"
	}
	return fmt.Sprintf("; listener http (port 80) admits only namespace %s and cert-manager's", in.Namespace)
}

// misselected re-judges the served claims once the listeners are planned: a
// claim whose route selects none of the listener that takes its hostname is
// NoMatchingParent, naming that listener. The plan is not redone: the
// listener stays, and the route is served once it names it (a pin taking a
// hostname from the wildcard a winner's route names; the other form of a
// listener name, after a hash collision). Since a losing namespace decides
// whether the pin exists, the message steers to an unset sectionName, the
// only choice no other namespace can move (see Listener selection in
// docs/design.md).
func misselected(in *Input, claims []*claim) {
	// Passthrough listeners, on 443, exist only where the serving port is
	// 443 (not on an edge Gateway).
	port := servingPort(in)
	for _, c := range claims {
		if !isServed(c.state) || c.listener == "" {
			continue
		}
		if selectsAny(c.refs, c.listener, port) {
			continue
		}
		c.state = v1alpha1.HostnameNoMatchingParent
		c.message = fmt.Sprintf("%s is taken by listener %s (port %d), which its parentRefs (%s) do not select: this route matches no listener for it (NoMatchingParent); leave sectionName unset, which follows the name: a contest for the name adds or removes its pin, moving it to another listener (or name %s)",
			c.hostname, c.listener, port, describeRefs(c.refs), c.listener)
	}
}

// selectsAny reports whether any of the parentRefs selects the listener.
func selectsAny(refs []ParentRef, listener string, port int32) bool {
	for _, p := range refs {
		if p.selects(listener, port) {
			return true
		}
	}
	return false
}

// maxRefsDescribed bounds how many parentRefs a message names: a route may
// list 32.
const maxRefsDescribed = 4

// describeRefs names the sectionName and port of each parentRef.
func describeRefs(refs []ParentRef) string {
	parts := make([]string, 0, min(len(refs), maxRefsDescribed))
	for i, p := range refs {
		if i == maxRefsDescribed {
			parts = append(parts, fmt.Sprintf("and %d more", len(refs)-i))
			break
		}
		var d []string
		if p.SectionName != "" {
			d = append(d, "sectionName "+p.SectionName)
		}
		if p.Port != 0 {
			d = append(d, fmt.Sprintf("port %d", p.Port))
		}
		if len(d) == 0 {
			d = append(d, "any listener")
		}
		parts = append(parts, strings.Join(d, " "))
	}
	return strings.Join(parts, "; ")
}
