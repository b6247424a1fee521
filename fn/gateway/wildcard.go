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
		// An idle zone has no listener by choice, not by a limit: names
		// under it are planned as under its parent.
		if ch.state != v1alpha1.ChildApexListening && ch.state != v1alpha1.ChildApexOutsideApex && ch.state != v1alpha1.ChildApexIdle {
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
		return v1alpha1.HostnameCovered, fmt.Sprintf("served by listener %s (%s)", s.name, h) + c.mismatch(in, h), s.name
	}
	_, under := c.serving(h)
	pin := c.pins[h]
	if st, msg := c.coverPinned(in, pin, h, under); st != "" {
		return st, msg, pin.name
	}
	best, domain := c.takes(h)
	if best != nil && slices.Contains(best.admit.exclude, ns) {
		st, _ := overLimit()
		return st, fmt.Sprintf("namespace %s is kept off listener %s (*.%s): a route of it claims a name under that listener that it lost, or a wildcard reaching into a child tenant's zone (see status.hostnames), and no listener of that name alone keeps the route out (at most %d listeners); fix or delete that route to be served again", ns, best.name, domain, MaxListeners), ""
	}
	note := ""
	if pin != nil && best != nil {
		// The pin was left out: the wider listener serves the hostname.
		note = fmt.Sprintf("; its own listener was left out (the Gateway would exceed %d listeners), so listener %s serves it", MaxListeners, best.name)
	}
	if best == nil || !best.admit.admits(t, ns) {
		return c.notAdmitted(in, t, h, ns, under, note)
	}
	msg := fmt.Sprintf("served by listener %s (*.%s)", best.name, domain)
	if in.Spec.CertMode != v1alpha1.CertModeEdge && !oneLabelBelow(h, domain) {
		msg += fmt.Sprintf("; the wildcard certificate for *.%s covers only names one label below %s, so clients will see a name mismatch", domain, domain)
	}
	return v1alpha1.HostnameCovered, msg + note, best.name
}

// notAdmitted judges a hostname whose serving listener leaves its namespace
// out: served all the same in an edge Gateway's shared table by a wider
// listener that admits it, else left out (under a child apex left out of
// the certificate, or by the listener budget).
func (c *coverage) notAdmitted(in *Input, t *tenancy, h, ns, under, note string) (v1alpha1.HostnameState, string, string) {
	if l, d := c.sharedServes(in, t, h, ns); l != nil {
		// Every edge listener shares port 80's route table, where a name
		// listed exactly beats any wildcard.
		return v1alpha1.HostnameCovered, fmt.Sprintf("served by listener %s (*.%s) in the port-80 route table every edge listener shares", l.name, d) + note, l.name
	}
	if c.dropped[under] == v1alpha1.ChildApexWaiting {
		return v1alpha1.HostnameWaiting, fmt.Sprintf("%s is under child apex %s, which waits for its certificate order (see status.childApexes)", h, under), ""
	}
	if c.dropped[under] == v1alpha1.ChildApexOverCertificateLimit {
		return v1alpha1.HostnameOverCertificateLimit, fmt.Sprintf("%s is under a child apex left out of the wildcard certificate: the ACME CA issues at most %d names per certificate", h, maxCertificateDNSNames), ""
	}
	st, msg := overLimit()
	return st, msg, ""
}

// coverPinned judges a hostname that has a pin of its own; "" when the pin
// was left out by the budget.
func (c *coverage) coverPinned(in *Input, s *slot, h, under string) (v1alpha1.HostnameState, string) {
	switch {
	case s == nil:
		return "", ""
	case s.invalid != "":
		return v1alpha1.HostnameInvalid, s.invalid
	case s.kept && c.dropped[under] == v1alpha1.ChildApexOverCertificateLimit:
		return v1alpha1.HostnameCovered, fmt.Sprintf("served by listener %s (%s), but it is under child apex %s, left out of the wildcard certificate (the ACME CA issues at most %d names per certificate), so clients will see a name mismatch", s.name, h, under, maxCertificateDNSNames)
	case s.kept:
		return v1alpha1.HostnameCovered, fmt.Sprintf("served by listener %s (%s)", s.name, h) + c.mismatch(in, h)
	}
	return "", ""
}

// mismatch is the note for a hostname with a listener of its own in a TLS
// mode when the wildcard certificate every HTTPS listener serves does not
// cover it: the certificate names the apex and each listening child apex,
// with their wildcards, and a wildcard covers one label only.
func (c *coverage) mismatch(in *Input, h string) string {
	if in.Spec.CertMode == v1alpha1.CertModeEdge {
		return ""
	}
	d := parent(h)
	if isWildcard(h) {
		d = base(h)
	}
	if h == in.Spec.Apex || c.certDomain(h) || c.certDomain(d) {
		return ""
	}
	return fmt.Sprintf("; the wildcard certificate covers only %s, the child apexes and names one label below them, so clients will see a name mismatch", in.Spec.Apex)
}

// certDomain reports whether d is the apex or a listening child apex: a
// domain whose wildcard the certificate carries.
func (c *coverage) certDomain(d string) bool {
	s := c.wildcard[d]
	return s != nil && s.kept && (s.admit.kind == admitApex || s.prefix == prefixChild || s.prefix == prefixEdgeChild)
}

// unenforced re-judges the losers of a hostname whose pin the budget left
// out: the listener that serves the hostname instead may admit them too (or,
// on an edge Gateway, a wider one lists it for them in the shared table), so
// the conflict is not enforced, and status must not say they are refused.
func (c *coverage) unenforced(in *Input, t *tenancy, claims []*claim) {
	for _, cl := range claims {
		// A TLSRoute is served only by its passthrough listener; a kept
		// listener of exactly the name is narrowed to the winner.
		if cl.state != v1alpha1.HostnameConflict || cl.passthrough != "" || c.heldExactly(cl.hostname) || c.pinInvalid(cl.hostname) {
			continue
		}
		l, _ := c.takes(cl.hostname)
		if l == nil || !l.admit.admits(t, cl.namespace) {
			// On an edge Gateway the loser's route lists the name in the
			// shared port-80 table under any wider listener that admits
			// it, and a name listed exactly beats every wildcard: when
			// isolate left it there, nobody else lists the name, so the
			// loser answers it.
			l, _ = c.sharedServes(in, t, cl.hostname, cl.namespace)
		}
		if l != nil && selectsAny(cl.refs, l.name, servingPort(in)) {
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
func (c *coverage) childSlots(in *Input, served servedListeners, children []*child) []*slot {
	listening := listeningChildren(children)
	out := make([]*slot, 0, len(listening))
	servedHosts := served.hostnames()
	for _, ch := range listening {
		ch.held = ch.held || servedHosts["*."+ch.apex]
		if ch.idle && !ch.held {
			// No listener to give up: the zone takes none (and no
			// pin is planned against one it will not have).
			ch.state, ch.message = v1alpha1.ChildApexIdle, idleMessage
			continue
		}
		ch.slot = &slot{prefix: childPrefix(in.Spec.CertMode), subject: ch.apex, hostname: "*." + ch.apex, namespace: ch.namespace, admit: admission{kind: admitChild, value: ch.apex}, idle: ch.idle, held: ch.held}
		out = append(out, ch.slot)
		c.index(ch.slot)
	}
	return out
}

// apexPins give a listening child apex a listener of its bare apex when a
// route of a wider zone would otherwise answer it. A child's listener is
// *.<child>, which does not match the child apex itself, so the wider
// listener *.<parent> takes it (by SNI, and in a shared table, where
// *.<parent> is the longest wildcard suffix of the name): a parent's
// wildcard route, or one without hostnames, would answer a name delegated
// to the child. The pin admits what the child's listener admits, and the
// zone guard lists the apex on it (see Zone guards in docs/design.md). A
// child that routes its apex itself already has a pin for it (pinSlots).
// Only an exposed apex takes a place, and the pin is the child's turn in
// the budget: a zone no wider route reaches costs nothing more.
func (c *coverage) apexPins(in *Input, t *tenancy, children []*child, claims []*claim, hostless []*Route) []*slot {
	var out []*slot
	for _, ch := range children {
		if ch.slot == nil {
			continue
		}
		if s := c.pins[ch.apex]; s != nil {
			ch.apexPin = s
			continue
		}
		if c.exact[ch.apex] != nil || !exposedApex(t, ch.apex, claims, hostless) {
			continue
		}
		s := &slot{prefix: pinPrefix(in.Spec.CertMode), subject: ch.apex, hostname: ch.apex, namespace: ch.namespace, admit: ch.slot.admit, zoneApex: true}
		ch.apexPin = s
		c.pins[ch.apex] = s
		out = append(out, s)
	}
	return out
}

// exposedApex reports whether a route of a namespace delegated a zone wider
// than apex could answer apex through a wider listener: a wildcard above it,
// or a route without hostnames.
func exposedApex(t *tenancy, apex string, claims []*claim, hostless []*Route) bool {
	wider := func(ns string) bool {
		d, ok := t.delegation(ns)
		return ok && d != apex && strings.HasSuffix(apex, "."+d)
	}
	for _, cl := range claims {
		if cl.state == "" && isWildcard(cl.hostname) && strings.HasSuffix(apex, "."+base(cl.hostname)) && wider(cl.namespace) {
			return true
		}
	}
	return slices.ContainsFunc(hostless, func(r *Route) bool { return wider(r.Namespace) })
}

// keepApexPins leaves out an apex pin whose child listener is left out: the
// zone is then its parent's, as DNS would have it, apex included.
func keepApexPins(children []*child) {
	for _, ch := range children {
		if ch.apexPin != nil && ch.slot != nil && !ch.slot.kept && ch.apexPin.zoneApex {
			ch.apexPin.kept = false
		}
	}
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
		s := c.pinFor(in, t, o)
		if s == nil {
			continue
		}
		pins = append(pins, s)
		c.pins[o.hostname] = s
		if isWildcard(o.hostname) {
			c.wildcard[base(o.hostname)] = s
		}
	}
	slices.SortFunc(pins, func(a, b *slot) int { return strings.Compare(a.hostname, b.hostname) })
	return pins
}

// pinFor is the pin o's hostname needs, nil when it needs none: who pays
// for it in the budget, and which listener it keeps whole (within) or
// guards.
func (c *coverage) pinFor(in *Input, t *tenancy, o owner) *slot {
	within := c.nestedAdmits(t, o)
	if within == nil && !c.needsPin(t, o) {
		return nil
	}
	s := &slot{prefix: pinPrefix(in.Spec.CertMode), subject: o.hostname, hostname: o.hostname, namespace: o.namespace, admit: pinTo(o.namespace), within: within}
	if l, _ := c.serving(o.hostname); within == nil && l != nil && l.prefix != "" && !l.admit.admits(t, o.namespace) {
		s.guards = l
	}
	switch {
	case len(o.losers) > 0:
		// The pin exists for the losers: it takes their turn.
		s.payer = o.losers[0]
	case within != nil:
		// The pin exists for the wildcard pin above it: it takes that
		// pin's turn.
		s.payer = within.payer
	}
	return s
}

// nestedAdmits is the most specific wildcard listener above o's hostname
// that admits its owner when a wider wildcard listener above that one admits
// it too: a wildcard pin of a publisher or of the owner (a contest's winner)
// stays under *.<apex>, which admits them as well. A route attaches to both,
// and a table they share (every edge listener's port-80 table, Cilium's
// HTTPS table) lists the name under each, which Envoy refuses whole; a pin
// of exactly the name takes it out of both. nil when at most one admits it.
func (c *coverage) nestedAdmits(t *tenancy, o owner) *slot {
	var nearest *slot
	twice := false
	eachDomain(parent(base(o.hostname)), func(d string) bool {
		if s := c.wildcard[d]; s != nil && s.admit.admits(t, o.namespace) {
			if nearest != nil {
				twice = true
				return true
			}
			nearest = s
		}
		return false
	})
	if !twice {
		return nil
	}
	return nearest
}

// keepPinsWhole leaves out the pins keepNestedWhole and keepGuarded leave
// out, walking both until neither leaves out anything more: a pin one of
// them leaves out may be one the other needs kept (a guarded inner pin left
// out leaves its outer wildcard pin listing a name twice in a shared
// table). Each pass leaves out at least one pin, so the walk ends.
func keepPinsWhole(pins []*slot) {
	for {
		nested := keepNestedWhole(pins)
		if guarded := keepGuarded(pins); !nested && !guarded {
			return
		}
	}
}

// keepNestedWhole leaves out a wildcard pin whose names need a pin of their
// own (nestedAdmits) that the budget left out or could not name: without it
// the name would be listed twice in a shared table. The pin's contest then
// waits as any pin left out does (see Conflicts in docs/design.md). A pin
// left out this way may be one that another wildcard pin needs in turn, so
// the walk repeats until nothing changes (a chain is as deep as the labels
// of a name, and each pass leaves out at least one pin). It reports whether
// it left out any.
func keepNestedWhole(pins []*slot) bool {
	left := false
	for changed := true; changed; {
		changed = false
		for _, s := range pins {
			if s.within != nil && !s.kept && s.within.kept {
				s.within.kept = false
				changed, left = true, true
			}
		}
	}
	return left
}

// keepGuarded leaves out a new listener (a child apex's, or a wildcard pin)
// whose hostname would take a name from the namespace served it through a
// wider listener, when the pin that keeps the name served has no place: a
// tenant's first route in its zone must not end another's service through
// the budget (see Budgets in docs/design.md). A listener on the Gateway now
// keeps its place; the name then waits for the pin, as any name whose pin
// is left out. It reports whether it left out any.
func keepGuarded(pins []*slot) bool {
	changed := false
	for _, s := range pins {
		if g := s.guards; g != nil && !s.kept && g.kept && !g.served {
			g.kept = false
			changed = true
		}
	}
	return changed
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
	case c.anyAdmits(t, o.hostname, o.losers, false):
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
func (c *coverage) anyAdmits(t *tenancy, h string, namespaces []string, keptOnly bool) bool {
	if len(namespaces) == 0 {
		return false
	}
	found := false
	eachDomain(parent(base(h)), func(d string) bool {
		if s := c.wildcard[d]; s != nil && (s.kept || !keptOnly) && admitsAny(t, s.admit, namespaces) {
			found = true
		}
		return found
	})
	return found
}

// isolate keeps the losers of every name off the wider listeners that admit
// them when no kept listener has exactly that name: a route attaches to every
// listener whose hostname intersects its own, and implementations strip a
// name from the wider listeners only where another listener has exactly it.
// Without this, a pin the budget (or a 64-bit name collision) left out would
// let the loser answer the name, and on a shared route table list it twice
// (see Budgets in docs/design.md).
func (c *coverage) isolate(t *tenancy, owners []owner, reach bool) {
	for _, o := range owners {
		if len(o.losers) == 0 || c.heldExactly(o.hostname) {
			continue
		}
		winner := c.keptAdmitting(t, o.hostname, o.namespace)
		if !reach && winner == nil {
			// No kept listener serves the winner the name: the losers
			// keep being served what they were, unless they are
			// admitted by two listeners, whose shared table would list
			// the name twice: then only the most specific keeps them.
			var first *slot
			for _, ns := range o.losers {
				if l := c.keptAdmitting(t, o.hostname, ns); l != nil && (first == nil || len(l.hostname) > len(first.hostname)) {
					first = l
				}
			}
			if first == nil || !c.listsElsewhere(t, o, first) {
				continue
			}
			winner = first
		}
		c.keepOff(t, o, winner)
	}
}

// keptAdmitting is the most specific kept wildcard listener above h that
// admits ns: the one that lists h for ns's routes.
func (c *coverage) keptAdmitting(t *tenancy, h, ns string) (found *slot) {
	eachDomain(parent(base(h)), func(d string) bool {
		if s := c.wildcard[d]; s != nil && s.kept && s.admit.admits(t, ns) {
			found = s
		}
		return found != nil
	})
	return found
}

// heldExactly reports whether a kept listener has exactly hostname h.
func (c *coverage) heldExactly(h string) bool {
	if s := c.exact[h]; s != nil && s.kept {
		return true
	}
	s := c.pins[h]
	return s != nil && s.kept
}

// pinInvalid reports whether h's pin could not be named: its claims are
// Invalid, served by no listener.
func (c *coverage) pinInvalid(h string) bool {
	s := c.pins[h]
	return s != nil && s.invalid != ""
}

// keepOff excludes the owner's losers from every kept wildcard listener
// above its hostname that admits them, but the one that lists the name for
// the winner (winner, nil when none does): there the losers' routes share
// the winner's entry for the name, which no table lists twice, and keeping
// them off would take every other name they are served there (the contest
// waits for its pin instead, and status says so).
func (c *coverage) keepOff(t *tenancy, o owner, winner *slot) {
	eachDomain(parent(base(o.hostname)), func(d string) bool {
		if s := c.wildcard[d]; s != nil && s.kept && s != winner {
			for _, ns := range o.losers {
				if s.admit.admits(t, ns) {
					s.admit = s.admit.excluding(ns)
				}
			}
		}
		return false
	})
}

// sharedServes is, on an edge Gateway, the kept wildcard listener above h
// that admits ns, with its domain: the shared port-80 table lists h under it
// whichever listener SNI would pick elsewhere. nil elsewhere.
func (c *coverage) sharedServes(in *Input, t *tenancy, h, ns string) (best *slot, domain string) {
	if in.Spec.CertMode != v1alpha1.CertModeEdge || isWildcard(h) {
		return nil, ""
	}
	eachDomain(parent(base(h)), func(d string) bool {
		if s := c.wildcard[d]; s != nil && s.kept && s.admit.admits(t, ns) {
			best, domain = s, d
			return true
		}
		return false
	})
	return best, domain
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

// listsElsewhere reports whether a kept wildcard listener above o's hostname
// other than l admits one of o's losers.
func (c *coverage) listsElsewhere(t *tenancy, o owner, l *slot) bool {
	found := false
	eachDomain(parent(base(o.hostname)), func(d string) bool {
		if s := c.wildcard[d]; s != nil && s.kept && s != l && admitsAny(t, s.admit, o.losers) {
			found = true
		}
		return found
	})
	return found
}
