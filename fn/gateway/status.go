package gateway

import (
	"fmt"
	"sort"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// MaxHostnameStatus bounds status.hostnames. The XR is stored in etcd, whose
// objects are limited to about 1.5 MiB; ten thousand claims with their
// messages would pass that and make every status update fail.
const MaxHostnameStatus = 1000

// Byte budgets of the status lists, since their entries carry names and
// messages of up to a few hundred bytes each: together with the rest of the
// status they stay well under etcd's limit (see Bounds in docs/design.md).
const (
	maxHostnameStatusBytes     = 256 << 10
	maxConflictStatusBytes     = 128 << 10
	maxHostnamelessStatusBytes = 64 << 10
)

// entryOverhead approximates the JSON keys and punctuation of a list entry.
const entryOverhead = 64

// hostnameStatus reports the claims, sorted by hostname then route. Past
// MaxHostnameStatus it keeps the claims that are not served first, since
// those are what an operator looks for, then fills up with served ones.
func hostnameStatus(in *Input, claims []*claim) []v1alpha1.HostnameStatus {
	keep := claims
	if len(claims) > MaxHostnameStatus || claimBytes(claims) > maxHostnameStatusBytes {
		keep = make([]*claim, 0, min(len(claims), MaxHostnameStatus))
		bytes := 0
		for _, served := range []bool{false, true} {
			for _, c := range claims {
				if isServed(c.state) != served {
					continue
				}
				n := claimBytes([]*claim{c})
				if len(keep) == MaxHostnameStatus || bytes+n > maxHostnameStatusBytes {
					break
				}
				keep, bytes = append(keep, c), bytes+n
			}
		}
		sort.Slice(keep, func(i, j int) bool { return claimLess(keep[i], keep[j]) })
	}
	out := make([]v1alpha1.HostnameStatus, 0, len(keep))
	for _, c := range keep {
		msg := c.message
		if msg == "" && c.state == v1alpha1.HostnameOverListenerLimit {
			msg = overLimitMessage(in, c.hostname)
		}
		out = append(out, v1alpha1.HostnameStatus{Hostname: c.hostname, Route: c.route, State: c.state, Message: msg})
	}
	return out
}

// claimBytes is about what the claims take in status.hostnames.
func claimBytes(claims []*claim) int {
	n := 0
	for _, c := range claims {
		n += len(c.hostname) + len(c.route) + len(c.state) + len(c.message) + entryOverhead
		if c.message == "" {
			n += 2*len(c.hostname) + 160 // about the message written later
		}
	}
	return n
}

func isServed(s v1alpha1.HostnameState) bool {
	return s == v1alpha1.HostnameListening || s == v1alpha1.HostnameCovered || s == v1alpha1.HostnamePassthrough
}

// conflictStatus reports the first contested hostnames, in hostname order,
// each with at most MaxConflictLosers losers: at most MaxConflictStatus and
// maxConflictStatusBytes.
func conflictStatus(contests []*contest) []v1alpha1.ConflictStatus {
	out := make([]v1alpha1.ConflictStatus, 0, min(len(contests), v1alpha1.MaxConflictStatus))
	bytes := 0
	for _, ct := range contests {
		s := v1alpha1.ConflictStatus{Hostname: ct.hostname, Winner: ct.winner.route}
		s.Losers, s.MoreLosers = ct.shownLosers()
		n := len(s.Hostname) + len(s.Winner) + entryOverhead
		for _, l := range s.Losers {
			n += len(l) + 3
		}
		if len(out) == v1alpha1.MaxConflictStatus || bytes+n > maxConflictStatusBytes {
			break
		}
		out, bytes = append(out, s), bytes+n
	}
	return out
}

// childApexStatus reports the inheriting child apexes, in apex order: the
// Listening ones first (up to MaxListeners: every one that has a listener or
// certificate names, the function's memory of them) and at most
// MaxChildApexStatus others.
func childApexStatus(children []*child) []v1alpha1.ChildApexStatus {
	out := make([]v1alpha1.ChildApexStatus, 0, min(len(children), v1alpha1.MaxChildApexStatus+MaxListeners))
	listening, others := 0, 0
	for _, c := range children {
		n := &others
		limit := v1alpha1.MaxChildApexStatus
		if c.state == v1alpha1.ChildApexListening {
			n, limit = &listening, MaxListeners
		}
		if *n == limit {
			continue
		}
		*n++
		out = append(out, v1alpha1.ChildApexStatus{Apex: c.apex, Namespace: c.namespace, State: c.state, Message: c.message})
	}
	return out
}

// hostnamelessStatus reports the first attached routes without hostnames,
// with the listeners that admit their namespace and that their parentRefs
// select: at most MaxHostnamelessStatus and maxHostnamelessStatusBytes.
func hostnamelessStatus(in *Input, t *tenancy, p *plan, routes []*Route) []v1alpha1.HostnamelessRouteStatus {
	out := make([]v1alpha1.HostnamelessRouteStatus, 0, min(len(routes), v1alpha1.MaxHostnamelessStatus))
	bytes := 0
	for _, r := range routes {
		s := v1alpha1.HostnamelessRouteStatus{Route: r.ID()}
		n := len(s.Route) + entryOverhead
		refs := parentRefsTo(in, r)
		for i, a := range p.admits {
			if l := p.listeners[i]; a.admits(t, r.Namespace) && selectsAny(refs, string(l.Name), l.Port) {
				s.Listeners = append(s.Listeners, string(l.Name))
				n += len(l.Name) + 3
			}
		}
		if len(out) == v1alpha1.MaxHostnamelessStatus || bytes+n > maxHostnamelessStatusBytes {
			break
		}
		out, bytes = append(out, s), bytes+n
	}
	return out
}

// LeftOut counts the distinct hostnames and child apexes each limit left
// out.
type LeftOut struct {
	// Listeners counts those the 64-listener budget left out.
	Listeners int
	// Certificate counts those the dns01 certificate's 100-name limit left
	// out.
	Certificate int
}

// Total is every hostname and child apex left out.
func (l LeftOut) Total() int { return l.Listeners + l.Certificate }

// pinsOnly are the dropped pins whose hostname is not itself left out (so
// counted once): those still served by a wildcard.
func pinsOnly(claims []*claim, droppedPins []string) []string {
	if len(droppedPins) == 0 {
		return nil
	}
	pins := make(map[string]bool, len(droppedPins))
	for _, p := range droppedPins {
		pins[p] = true
	}
	for _, c := range claims {
		if pins[c.hostname] && (c.state == v1alpha1.HostnameOverListenerLimit || c.state == v1alpha1.HostnameOverCertificateLimit) {
			pins[c.hostname] = false
		}
	}
	out := make([]string, 0, len(droppedPins))
	for _, p := range droppedPins {
		if pins[p] {
			out = append(out, p)
		}
	}
	return out
}

// maxLeftOutNamed bounds how many left-out names a warning is given to
// say; BoundedList cuts the message shorter still.
const maxLeftOutNamed = 100

// A leftOutSet is what a run left out: how many by each limit, a digest of
// all of them (status remembers it), and the first names, for the warning.
type leftOutSet struct {
	counts LeftOut
	digest string
	first  []string
}

// leftOutOf streams every hostname, pin and child apex a limit left out
// into a digest, in a fixed order (pins, hostnames, child apexes, each
// sorted), keeping the first names only: a Gateway can leave hundreds of
// thousands out.
func leftOutOf(claims []*claim, children []*child, droppedPins []string) leftOutSet {
	var s leftOutSet
	d := newLineDigest()
	add := func(line string, byCertificate bool) {
		if byCertificate {
			s.counts.Certificate++
		} else {
			s.counts.Listeners++
		}
		d.add(line)
		if len(s.first) < maxLeftOutNamed {
			s.first = append(s.first, line)
		}
	}
	for _, p := range pinsOnly(claims, droppedPins) {
		add("the pin of "+p+" ("+string(v1alpha1.HostnameOverListenerLimit)+")", false)
	}
	prev := ""
	for _, c := range claims {
		if (c.state == v1alpha1.HostnameOverListenerLimit || c.state == v1alpha1.HostnameOverCertificateLimit) && c.hostname != prev {
			prev = c.hostname
			add(c.hostname+" ("+string(c.state)+")", c.state == v1alpha1.HostnameOverCertificateLimit)
		}
	}
	for _, c := range children {
		if c.state == v1alpha1.ChildApexOverListenerLimit || c.state == v1alpha1.ChildApexOverCertificateLimit {
			add("child apex "+c.apex+" ("+string(c.state)+")", c.state == v1alpha1.ChildApexOverCertificateLimit)
		}
	}
	s.digest = d.sum()
	return s
}

// conflictLines describe every contest, one line each, in hostname order.
func conflictLines(contests []*contest) []string {
	out := make([]string, 0, len(contests))
	for _, ct := range contests {
		losers, more := ct.shownLosers()
		named := joinLosers(losers)
		if more > 0 {
			named += fmt.Sprintf(" and %d more", more)
		}
		out = append(out, fmt.Sprintf("%s: %s keeps it, %s refused", ct.hostname, ct.winner.route, named))
	}
	return out
}

// digests are what status remembers of this run's warnings.
func digests(contests []*contest, leftOut leftOutSet) v1alpha1.StatusDigests {
	d := newLineDigest()
	for _, ct := range contests {
		d.add(ct.hostname + " " + ct.winner.route + " " + joinLosers(ct.losers))
	}
	return v1alpha1.StatusDigests{Conflicts: d.sum(), LeftOut: leftOut.digest}
}
