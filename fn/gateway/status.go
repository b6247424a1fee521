package gateway

import (
	"fmt"
	"sort"
	"strings"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// MaxHostnameStatus bounds status.hostnames. The XR is stored in etcd, whose
// objects are limited to about 1.5 MiB; ten thousand claims with their
// messages would pass that and make every status update fail.
const MaxHostnameStatus = 1000

// hostnameStatus reports the claims, sorted by hostname then route. Past
// MaxHostnameStatus it keeps the claims that are not served first, since
// those are what an operator looks for, then fills up with served ones.
func hostnameStatus(claims []*claim) []v1alpha1.HostnameStatus {
	keep := claims
	if len(claims) > MaxHostnameStatus {
		keep = make([]*claim, 0, MaxHostnameStatus)
		for _, served := range []bool{false, true} {
			for _, c := range claims {
				if len(keep) == MaxHostnameStatus {
					break
				}
				if isServed(c.state) == served {
					keep = append(keep, c)
				}
			}
		}
		sort.Slice(keep, func(i, j int) bool { return claimLess(keep[i], keep[j]) })
	}
	out := make([]v1alpha1.HostnameStatus, 0, len(keep))
	for _, c := range keep {
		out = append(out, v1alpha1.HostnameStatus{Hostname: c.hostname, Route: c.route, State: c.state, Message: c.message})
	}
	return out
}

func isServed(s v1alpha1.HostnameState) bool {
	return s == v1alpha1.HostnameListening || s == v1alpha1.HostnameCovered || s == v1alpha1.HostnamePassthrough
}

// conflictStatus reports the first MaxConflictStatus contested hostnames, in
// hostname order, each with at most MaxConflictLosers losers.
func conflictStatus(contests []*contest) []v1alpha1.ConflictStatus {
	n := min(len(contests), v1alpha1.MaxConflictStatus)
	out := make([]v1alpha1.ConflictStatus, 0, n)
	for _, ct := range contests[:n] {
		s := v1alpha1.ConflictStatus{Hostname: ct.hostname, Winner: ct.winner.route, Losers: ct.losers}
		if len(ct.losers) > v1alpha1.MaxConflictLosers {
			s.Losers, s.MoreLosers = ct.losers[:v1alpha1.MaxConflictLosers], len(ct.losers)-v1alpha1.MaxConflictLosers
		}
		out = append(out, s)
	}
	return out
}

// childApexStatus reports every inheriting child apex, in apex order.
func childApexStatus(children []*child) []v1alpha1.ChildApexStatus {
	out := make([]v1alpha1.ChildApexStatus, 0, len(children))
	for _, c := range children {
		out = append(out, v1alpha1.ChildApexStatus{Apex: c.apex, Namespace: c.namespace, State: c.state, Message: c.message})
	}
	return out
}

// hostnamelessStatus reports the first MaxHostnamelessStatus attached routes
// without hostnames, with the listeners that admit their namespace.
func hostnamelessStatus(t *tenancy, p *plan, routes []*Route) []v1alpha1.HostnamelessRouteStatus {
	n := min(len(routes), v1alpha1.MaxHostnamelessStatus)
	out := make([]v1alpha1.HostnamelessRouteStatus, 0, n)
	for _, r := range routes[:n] {
		s := v1alpha1.HostnamelessRouteStatus{Route: r.ID()}
		for i, a := range p.admits {
			if a.admits(t, r.Namespace) {
				s.Listeners = append(s.Listeners, string(p.listeners[i].Name))
			}
		}
		out = append(out, s)
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

func leftOut(claims []*claim, children []*child) LeftOut {
	var l LeftOut
	seen := map[string]bool{}
	for _, c := range claims {
		if seen[c.hostname] {
			continue
		}
		switch c.state {
		case v1alpha1.HostnameOverListenerLimit:
			l.Listeners++
		case v1alpha1.HostnameOverCertificateLimit:
			l.Certificate++
		default:
			continue
		}
		seen[c.hostname] = true
	}
	for _, c := range children {
		switch c.state {
		case v1alpha1.ChildApexOverListenerLimit:
			l.Listeners++
		case v1alpha1.ChildApexOverCertificateLimit:
			l.Certificate++
		}
	}
	return l
}

// leftOutNames are the hostnames and child apexes left out, sorted, each
// with the limit that left it out.
func leftOutNames(claims []*claim, children []*child) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range claims {
		if (c.state == v1alpha1.HostnameOverListenerLimit || c.state == v1alpha1.HostnameOverCertificateLimit) && !seen[c.hostname] {
			seen[c.hostname] = true
			out = append(out, fmt.Sprintf("%s (%s)", c.hostname, c.state))
		}
	}
	for _, c := range children {
		if c.state == v1alpha1.ChildApexOverListenerLimit || c.state == v1alpha1.ChildApexOverCertificateLimit {
			out = append(out, fmt.Sprintf("child apex %s (%s)", c.apex, c.state))
		}
	}
	sort.Strings(out)
	return out
}

// conflictLines describe every contest, one line each, in hostname order.
func conflictLines(contests []*contest) []string {
	out := make([]string, 0, len(contests))
	for _, ct := range contests {
		out = append(out, fmt.Sprintf("%s: %s keeps it, %s refused", ct.hostname, ct.winner.route, joinBounded(ct.losers)))
	}
	return out
}

// joinBounded joins the first MaxConflictLosers items with commas.
func joinBounded(items []string) string {
	if len(items) <= v1alpha1.MaxConflictLosers {
		return commaJoin(items)
	}
	return fmt.Sprintf("%s and %d more", commaJoin(items[:v1alpha1.MaxConflictLosers]), len(items)-v1alpha1.MaxConflictLosers)
}

func commaJoin(items []string) string { return strings.Join(items, ", ") }

// digests are what status remembers of this run's warnings.
func digests(claims []*claim, contests []*contest, children []*child) v1alpha1.StatusDigests {
	lines := make([]string, 0, len(contests))
	for _, ct := range contests {
		lines = append(lines, ct.hostname+" "+ct.winner.route+" "+commaJoin(ct.losers))
	}
	return v1alpha1.StatusDigests{Conflicts: digest(lines), LeftOut: digest(leftOutNames(claims, children))}
}
