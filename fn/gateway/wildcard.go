package gateway

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// A coverage indexes the listeners of a wildcard mode by the hostname they
// serve exactly and by the domain a wildcard listener covers.
type coverage struct {
	exact    map[string]*slot
	wildcard map[string]*slot
	pins     map[string]*slot
	// dropped are the child apexes left out, with the limit that did it.
	dropped map[string]v1alpha1.ChildApexState
}

func newCoverage(fixed []*slot) *coverage {
	c := &coverage{exact: map[string]*slot{}, wildcard: map[string]*slot{}, pins: map[string]*slot{}, dropped: map[string]v1alpha1.ChildApexState{}}
	for _, s := range fixed {
		c.index(s)
	}
	return c
}

func (c *coverage) index(s *slot) {
	c.exact[s.hostname] = s
	if isWildcard(s.hostname) {
		c.wildcard[base(s.hostname)] = s
	}
}

// dropChildren records the child apexes left out so far.
func (c *coverage) dropChildren(children []*child) {
	for _, ch := range children {
		if ch.state != v1alpha1.ChildApexListening && ch.state != v1alpha1.ChildApexOutsideApex {
			c.dropped[ch.apex] = ch.state
		}
	}
}

// serving is the wildcard listener that would serve h if it has no exact
// one and every listening child apex kept its listener: the wildcard of the
// longest domain above it (Gateway API wildcards match any number of labels,
// but not the domain itself). under is a child apex left out that is more
// specific than that wildcard, if any.
func (c *coverage) serving(h string) (best *slot, under string) {
	domain := ""
	eachDomain(parent(base(h)), func(d string) bool {
		best, domain = c.wildcard[d], d
		return best != nil
	})
	eachDomain(base(h), func(d string) bool {
		if len(d) > len(domain) && c.dropped[d] != "" {
			under = d
			return true
		}
		return false
	})
	return best, under
}

// cover judges a claim of h from namespace ns by the listener that serves
// it, which it returns.
func (c *coverage) cover(in *Input, t *tenancy, h, ns string) (v1alpha1.HostnameState, string, string) {
	if s := c.exact[h]; s != nil && s.kept {
		return v1alpha1.HostnameCovered, fmt.Sprintf("served by listener %s (%s)", s.name, h), s.name
	}
	_, under := c.serving(h)
	note := ""
	if s := c.pins[h]; s != nil {
		if st, msg := c.coverPinned(s, h, under); st != "" {
			return st, msg, s.name
		}
		// The pin was left out: what serves the hostname instead serves
		// every namespace it admits.
		note = fmt.Sprintf("; listener %s, which would admit only namespace %s for it, was left out: the Gateway would exceed %d listeners", s.name, s.namespace, MaxListeners)
	}
	best, domain := c.takes(h)
	if best == nil || !best.admit.admits(t, ns) {
		// The listener that would serve it leaves the namespace out: a
		// child apex left out, more specific than that wildcard.
		if c.dropped[under] == v1alpha1.ChildApexOverCertificateLimit {
			return v1alpha1.HostnameOverCertificateLimit, fmt.Sprintf("%s is under a child apex left out of the wildcard certificate: the ACME CA issues at most %d names per certificate", h, maxCertificateDNSNames), ""
		}
		st, msg := overLimit()
		return st, msg, ""
	}
	msg := fmt.Sprintf("served by listener %s (*.%s)", best.name, domain)
	if in.Spec.CertMode != v1alpha1.CertModeEdge && !oneLabelBelow(h, domain) {
		msg += fmt.Sprintf("; the wildcard certificate for *.%s covers only names one label below %s, so clients will see a name mismatch", domain, domain)
	}
	return v1alpha1.HostnameCovered, msg + note, best.name
}

// coverPinned judges a hostname that has a pin of its own; "" when the pin
// was left out by the budget.
func (c *coverage) coverPinned(s *slot, h, under string) (v1alpha1.HostnameState, string) {
	switch {
	case s.invalid != "":
		return v1alpha1.HostnameInvalid, s.invalid
	case s.kept && c.dropped[under] == v1alpha1.ChildApexOverCertificateLimit:
		return v1alpha1.HostnameCovered, fmt.Sprintf("served by listener %s (%s), but it is under child apex %s, left out of the wildcard certificate (the ACME CA issues at most %d names per certificate), so clients will see a name mismatch", s.name, h, under, maxCertificateDNSNames)
	case s.kept:
		return v1alpha1.HostnameCovered, fmt.Sprintf("served by listener %s (%s)", s.name, h)
	}
	return "", ""
}

// unenforced re-judges the losers of a hostname whose pin the budget left
// out: the listener that serves the hostname instead may admit them too, so
// the conflict is not enforced, and status must not say they are refused.
func (c *coverage) unenforced(in *Input, t *tenancy, claims []*claim) {
	for _, cl := range claims {
		if cl.state != v1alpha1.HostnameConflict {
			continue
		}
		if s := c.pins[cl.hostname]; s != nil && (s.kept || s.invalid != "") {
			continue
		}
		if s := c.exact[cl.hostname]; s != nil && s.kept {
			continue // narrowed to the winner
		}
		if l, _ := c.takes(cl.hostname); l != nil && l.admit.admits(t, cl.namespace) && selectsAny(cl.refs, l.name, servingPort(in)) {
			if st, msg, name := c.cover(in, t, cl.hostname, cl.namespace); isServed(st) {
				cl.state, cl.message, cl.listener = st, cl.route+" lost "+cl.hostname+", but "+msg, name
			}
		}
	}
}

func admitsAny(t *tenancy, a admission, namespaces []string) bool {
	for _, ns := range namespaces {
		if a.admits(t, ns) {
			return true
		}
	}
	return false
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// childSlots makes the listener of every listening child apex and indexes
// it.
func (c *coverage) childSlots(in *Input, children []*child) []*slot {
	listening := listeningChildren(children)
	out := make([]*slot, 0, len(listening))
	for _, ch := range listening {
		ch.slot = &slot{prefix: childPrefix(in.Spec.CertMode), subject: ch.apex, hostname: "*." + ch.apex, namespace: ch.namespace, admit: admission{kind: admitChild, value: ch.apex}}
		out = append(out, ch.slot)
		c.index(ch.slot)
	}
	return out
}

// pinSlots decides which hostnames need a listener of their own that admits
// only their owner (see Conflicts in docs/design.md), in hostname order.
// Wildcards are judged first, the least specific first, so that a wildcard
// pin is in place when the names under it are judged: the most specific
// listener takes a request.
func (c *coverage) pinSlots(in *Input, t *tenancy, owners []owner) []*slot {
	slices.SortStableFunc(owners, func(a, b owner) int {
		wa, wb := isWildcard(a.hostname), isWildcard(b.hostname)
		if wa && wb {
			return cmp.Compare(strings.Count(a.hostname, "."), strings.Count(b.hostname, "."))
		}
		return cmp.Compare(boolRank(!wa), boolRank(!wb))
	})
	var pins []*slot
	for _, o := range owners {
		if s := c.exact[o.hostname]; s != nil {
			if admitsAny(t, s.admit, o.losers) {
				s.admit = pinTo(o.namespace)
			}
			continue
		}
		if !c.needsPin(t, o) {
			continue
		}
		s := &slot{prefix: pinPrefix(in.Spec.CertMode), subject: o.hostname, hostname: o.hostname, namespace: o.namespace, admit: pinTo(o.namespace)}
		pins = append(pins, s)
		c.pins[o.hostname] = s
		if isWildcard(o.hostname) {
			c.wildcard[base(o.hostname)] = s
		}
	}
	slices.SortFunc(pins, func(a, b *slot) int { return strings.Compare(a.hostname, b.hostname) })
	return pins
}

// needsPin reports whether a hostname without an exact listener needs one:
// the listener that would serve it leaves its owner out, or any listener
// whose wildcard matches it lets a loser in. A route attaches to every
// listener whose hostname intersects its own, and an implementation strips
// a hostname from the wider listeners only where another listener has
// exactly that hostname: without a pin the loser stays attached to the wider
// one (served on a connection made for another name, and, where listeners
// share a port's route table, a domain listed twice, which Envoy refuses
// whole). A hostname under a child apex left out of the certificate gets
// none unless contested: a pin on that certificate would not fix its name.
func (c *coverage) needsPin(t *tenancy, o owner) bool {
	l, under := c.serving(o.hostname)
	switch {
	case c.anyAdmits(t, o.hostname, o.losers):
		return true
	case l != nil && l.admit.admits(t, o.namespace):
		return false
	case under != "" && len(o.losers) == 0:
		return false
	}
	return true
}

// anyAdmits reports whether any wildcard listener above h admits one of the
// namespaces.
func (c *coverage) anyAdmits(t *tenancy, h string, namespaces []string) bool {
	if len(namespaces) == 0 {
		return false
	}
	found := false
	eachDomain(parent(base(h)), func(d string) bool {
		if s := c.wildcard[d]; s != nil && admitsAny(t, s.admit, namespaces) {
			found = true
		}
		return found
	})
	return found
}

// takes is the kept wildcard listener that takes a request for h when no
// exact listener or pin of h is kept, with the domain it covers: the
// wildcard of the longest domain above h (Gateway API wildcards match any
// number of labels, but not the domain itself).
func (c *coverage) takes(h string) (best *slot, domain string) {
	eachDomain(parent(base(h)), func(d string) bool {
		if s := c.wildcard[d]; s != nil && s.kept {
			best, domain = s, d
			return true
		}
		return false
	})
	return best, domain
}
