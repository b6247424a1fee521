package gateway

import "fmt"

// A slot is a listener named after a hostname or a child apex: an http01
// per-host listener, a child apex listener or a pin. Slots compete for the
// listener budget.
type slot struct {
	// prefix of the listener name; subject is what the name is derived
	// from (the hostname, or the child apex); hostname is the listener's.
	prefix, subject, hostname string
	// namespace the listener is for, in the budget's round-robin.
	namespace string
	admit     admission
	// name is the listener name allocated; invalid says why there is none.
	name, invalid string
	kept          bool
}

// allocateNames gives every slot a listener name that no other listener of
// the Gateway has. Each slot's name is <prefix><label>-<hex8> unless another
// slot derives the same: then the one served under that name now keeps it
// (else the one with the byte-smaller hostname) and the others take the long
// form <prefix><label>-<hex16>. A slot served under its long form keeps it.
// A slot whose name is still taken, or too long, is invalid. Slots must be
// in hostname order; taken are the fixed listener names.
func allocateNames(slots []*slot, served map[string]string, taken map[string]bool) {
	groups := map[string][]*slot{}
	var order []string
	for _, s := range slots {
		long := s.prefix + LongHostKey(s.subject)
		if served[long] == s.hostname {
			s.name = long
			continue
		}
		short := s.prefix + HostKey(s.subject)
		if _, ok := groups[short]; !ok {
			order = append(order, short)
		}
		groups[short] = append(groups[short], s)
	}
	for _, short := range order {
		g := groups[short]
		first := 0
		for i, s := range g {
			if h, ok := served[short]; ok && h == s.hostname {
				first = i
				break
			}
		}
		for i, s := range g {
			if i == first {
				s.name = short
			} else {
				s.name = s.prefix + LongHostKey(s.subject)
			}
		}
	}
	claimNames(slots, taken)
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
