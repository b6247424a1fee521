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
	key       string
	hostname  string
	namespace string
	// served marks what is being served now: it keeps its place.
	served bool
}

// fairShare returns the keys of the candidates that fit in n places. What is
// served now comes first, so nothing new takes a place away from an
// application being served; then new candidates round-robin across
// namespaces (the owner and attached namespaces first, then the others by
// name; one per namespace per round; hostname order within a namespace), so
// that no namespace can crowd out the others by asking for more.
func fairShare(cands []budgeted, n int, t *tenancy) map[string]bool {
	kept := make(map[string]bool, min(n, len(cands)))
	var fresh []budgeted
	for _, c := range cands {
		if c.served {
			fresh = append(fresh, c)
		}
	}
	slices.SortFunc(fresh, func(a, b budgeted) int { return cmp.Or(cmp.Compare(a.hostname, b.hostname), cmp.Compare(a.key, b.key)) })
	for _, c := range fresh {
		if len(kept) < n {
			kept[c.key] = true
		}
	}

	fresh = fresh[:0]
	for _, c := range cands {
		if !c.served {
			fresh = append(fresh, c)
		}
	}
	slices.SortFunc(fresh, func(a, b budgeted) int {
		ra, na := t.order(a.namespace)
		rb, nb := t.order(b.namespace)
		return cmp.Or(cmp.Compare(ra, rb), cmp.Compare(na, nb), cmp.Compare(a.hostname, b.hostname), cmp.Compare(a.key, b.key))
	})
	// Number each candidate by its place within its namespace: round r
	// takes every namespace's r-th candidate, in namespace order.
	round := make([]int, len(fresh))
	for i := range fresh {
		if i > 0 && fresh[i].namespace == fresh[i-1].namespace {
			round[i] = round[i-1] + 1
		}
	}
	idx := make([]int, len(fresh))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(round[a], round[b]) })
	for _, i := range idx {
		if len(kept) >= n {
			break
		}
		kept[fresh[i].key] = true
	}
	return kept
}
