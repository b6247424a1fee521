package gateway

import "fmt"

// A slot is a listener named after a hostname or a child apex: an http01
// per-host listener, a child apex listener or a pin. Slots compete for the
// listener budget.
type slot struct {
	// prefix of the listener name; subject is what the name is derived
	// from (the hostname, or the child apex); hostname is the listener's.
	prefix, subject, hostname string
	// namespace the listener is for; payer is whose turn it takes in the
	// budget's round-robin when not its own (a pin is charged to a
	// namespace that lost its name: see Budgets in docs/design.md).
	namespace, payer string
	admit            admission
	// idle marks a child apex no route uses: it gets no new listener, and
	// one it holds is the first given up (see Budgets in docs/design.md).
	idle bool
	// held: an idle child apex whose listener or certificate names are
	// served now.
	held bool
	// within is the wildcard pin above a pin that exists because both it
	// and a wider listener admit the name's namespace (nestedAdmits): the
	// wildcard pin is kept only with it.
	within *slot
	// guards is the new listener whose hostname would take this pin's name
	// from the namespace served it through a wider listener: that listener
	// is kept only with the pin (keepGuarded).
	guards *slot
	// zoneApex marks the listener of a child's bare apex that exists for
	// its zone guard (apexPins), not for a route of the child's.
	zoneApex bool
	// served: the listener is on the Gateway now (or, for a child apex in
	// dns01, its names are on the certificate), as the budget judged it.
	served bool
	// name is the listener name allocated; invalid says why there is none,
	// waiting why its Certificate may not be ordered yet.
	name, invalid, waiting string
	kept                   bool
	// recording: it waits only for the order ledger's record to be
	// written (a provider round trip), not for the quota.
	recording bool
}

// allocateNames gives every slot a listener name that no other listener of
// the Gateway has. Each slot's name is <prefix><label>-<hex8> unless another
// slot derives the same: then the one served under that name now keeps it
// (else the one with the byte-smaller hostname) and the others take the long
// form <prefix><label>-<hex16>. A form that would not fit (fits: a listener
// name, and its Certificate's, within their limits) gives way to the hash
// form <prefix>h<hex16>. A slot served under its long or hash form keeps
// it. A slot whose name is still taken is invalid. Slots must be in hostname
// order; taken are the fixed listener names.
func allocateNames(slots []*slot, served map[string]string, taken map[string]bool, fits func(string) bool) {
	groups := map[string][]*slot{}
	var order []string
	for _, s := range slots {
		long, hash := s.prefix+LongHostKey(s.subject), s.prefix+HashHostKey(s.subject)
		short := s.prefix + HostKey(s.subject)
		switch {
		case served[long] == s.hostname && fits(long):
			s.name = long
			continue
		case served[hash] == s.hostname || !fits(short):
			s.name = hash
			continue
		}
		if _, ok := groups[short]; !ok {
			order = append(order, short)
		}
		groups[short] = append(groups[short], s)
	}
	for _, short := range order {
		nameGroup(short, groups[short], served, fits)
	}
	claimNames(slots, taken)
}

// nameGroup names the slots that derive one short name: the one served
// under it keeps it (else the first, in hostname order), the others take
// the long form, or the hash form where the long one does not fit.
func nameGroup(short string, g []*slot, served map[string]string, fits func(string) bool) {
	first := 0
	for i, s := range g {
		if h, ok := served[short]; ok && h == s.hostname {
			first = i
			break
		}
	}
	for i, s := range g {
		switch long := s.prefix + LongHostKey(s.subject); {
		case i == first:
			s.name = short
		case fits(long):
			s.name = long
		default:
			s.name = s.prefix + HashHostKey(s.subject)
		}
	}
}

// claimNames checks the allocated names: too long, or still taken. A long
// form never equals a short one (a hex digit stands where the short form has
// its dash), so what is still taken here is a collision of 64-bit hashes:
// the later slot, in hostname order, loses.
func claimNames(slots []*slot, taken map[string]bool) {
	used := make(map[string]bool, len(taken)+len(slots))
	for n := range taken {
		used[n] = true
	}
	for _, s := range slots {
		switch {
		case len(s.name) > maxListenerName:
			s.invalid = fmt.Sprintf("its listener name %s would be %d characters, over the limit of %d; use a shorter first label", s.name, len(s.name), maxListenerName)
		case used[s.name]:
			s.invalid = fmt.Sprintf("its listener name %s is taken by another listener of the Gateway even in its long form", s.name)
		default:
			used[s.name] = true
		}
	}
}
