package gateway

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// A contest is a hostname claimed from more than one namespace.
type contest struct {
	hostname string
	winner   *claim
	losers   []string
	// loserNamespaces are the namespaces of the losers, sorted.
	loserNamespaces []string
}

// shownLosers are the losers that status.conflicts and the warnings name:
// the first MaxConflictLosers, and how many more lost.
func (ct *contest) shownLosers() ([]string, int) {
	if len(ct.losers) <= v1alpha1.MaxConflictLosers {
		return ct.losers, 0
	}
	return ct.losers[:v1alpha1.MaxConflictLosers], len(ct.losers) - v1alpha1.MaxConflictLosers
}

// joinLosers writes losing routes as one list, as the warnings and the
// digest of status.digests.conflicts read them.
func joinLosers(losers []string) string { return strings.Join(losers, ", ") }

// resolveConflicts decides, per hostname, which namespace keeps it: the most
// specific delegation, then a cozy-* namespace, then the smallest
// <namespace>/<name>; the kind of route does not matter. Routes of the
// winner's namespace never lose; the others are marked Conflict. Passthrough
// hostnames that were not lost are judged Passthrough here. It returns the
// contests in hostname order.
func resolveConflicts(claims []*claim) []*contest {
	// Claims are sorted by hostname, so each hostname's claims are a run.
	open := unjudged(claims)
	var out []*contest
	for i := 0; i < len(open); {
		j := i + 1
		for j < len(open) && open[j].hostname == open[i].hostname {
			j++
		}
		cs, h := open[i:j], open[i].hostname
		i = j
		w := cs[0]
		for _, c := range cs[1:] {
			if beats(c, w) {
				w = c
			}
		}
		ct := &contest{hostname: h, winner: w}
		for _, c := range cs {
			if c.namespace == w.namespace {
				continue
			}
			c.state = v1alpha1.HostnameConflict
			c.message = fmt.Sprintf("%s is claimed by %s, which wins it (the most specific delegation first, then cozy-* namespaces, then the smallest namespace/name); the Gateway admits only namespace %s for it", h, w.route, w.namespace)
			ct.losers = append(ct.losers, c.route)
			if !slices.Contains(ct.loserNamespaces, c.namespace) {
				ct.loserNamespaces = append(ct.loserNamespaces, c.namespace)
			}
		}
		if len(ct.losers) > 0 {
			sort.Strings(ct.losers)
			sort.Strings(ct.loserNamespaces)
			out = append(out, ct)
		}
	}
	judgePassthrough(claims)
	return out
}

// judgePassthrough settles the passthrough hostnames that were not lost.
func judgePassthrough(claims []*claim) {
	for _, c := range claims {
		if c.state == "" && c.passthrough != "" {
			c.listener = c.passthrough
			c.state, c.message = v1alpha1.HostnamePassthrough, fmt.Sprintf("served by TLS passthrough listener %s; the backend holds the certificate, so no HTTPS listener or Certificate is made", c.passthrough)
		}
	}
}

// beats reports whether claim a wins a hostname over claim b.
func beats(a, b *claim) bool {
	if a.specificity != b.specificity {
		return a.specificity > b.specificity
	}
	if isCozy(a.namespace) != isCozy(b.namespace) {
		return isCozy(a.namespace)
	}
	if ka, kb := a.namespace+"/"+a.name, b.namespace+"/"+b.name; ka != kb {
		return ka < kb
	}
	// Same namespace and name, other kind: the kind does not decide the
	// winner, but the route reported must not depend on input order.
	return a.route < b.route
}
