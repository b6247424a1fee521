package gateway

import (
	"cmp"
	"slices"
)

// MaxListeners is the Gateway API's limit of listeners per Gateway.
const MaxListeners = 64

// WarnListeners is the listener count past which the function warns.
const WarnListeners = 56

// A budgeted thing competes for a limited number of places: a listener
// (per-host, child apex or pin) or a child apex's names on the dns01
// certificate.
type budgeted struct {
	hostname  string
	namespace string
	// served marks what is being served now: it keeps its place.
	served bool
	// spare marks what is served but used by no route (an idle child
	// apex): it keeps its place only while no new candidate needs it.
	spare bool
}

// fairShare returns the hostnames (or apexes, unique among the candidates)
// of the candidates that fit in n places. What is served now comes first,
// so nothing new takes a place away from an application being served; then
// new candidates round-robin (the owner, the attached namespaces, then each
// branch of the delegation tree: one per turn per round; hostname order
// within a turn), so that no tenant can crowd out the others by asking for
// more, or by creating nested tenants.
func fairShare(cands []budgeted, n int, t *tenancy) map[string]bool {
	kept := make(map[string]bool, min(n, len(cands)))
	var served, fresh, spare []budgeted
	for _, c := range cands {
		switch {
		case c.spare:
			spare = append(spare, c)
		case c.served:
			served = append(served, c)
		default:
			fresh = append(fresh, c)
		}
	}
	keepUpTo(kept, served, n)

	type turn struct {
		rank int
		name string
	}
	turns := make([]turn, len(fresh))
	byNamespace := map[string]turn{}
	for i, c := range fresh {
		tu, ok := byNamespace[c.namespace]
		if !ok {
			tu.rank, tu.name = t.turn(c.namespace)
			byNamespace[c.namespace] = tu
		}
		turns[i] = tu
	}
	idx := make([]int, len(fresh))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(turns[a].rank, turns[b].rank), cmp.Compare(turns[a].name, turns[b].name),
			cmp.Compare(fresh[a].hostname, fresh[b].hostname))
	})
	// Number each candidate by its place within its turn: round r takes
	// every turn's r-th candidate, in turn order.
	round := make([]int, len(fresh))
	for k := 1; k < len(idx); k++ {
		if turns[idx[k]] == turns[idx[k-1]] {
			round[idx[k]] = round[idx[k-1]] + 1
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(round[a], round[b]) })
	for _, i := range idx {
		if len(kept) >= n {
			break
		}
		kept[fresh[i].hostname] = true
	}
	keepUpTo(kept, spare, n)
	return kept
}

// keepUpTo keeps cands in hostname order while fewer than n are kept.
func keepUpTo(kept map[string]bool, cands []budgeted, n int) {
	slices.SortFunc(cands, func(a, b budgeted) int { return cmp.Compare(a.hostname, b.hostname) })
	for _, c := range cands {
		if len(kept) < n {
			kept[c.hostname] = true
		}
	}
}
