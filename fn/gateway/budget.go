package gateway

import "sort"

// MaxListeners is the Gateway API's limit of listeners per Gateway.
const MaxListeners = 64

// WarnListeners is the listener count past which the function warns.
const WarnListeners = 56

// A candidate is a listener that competes for the budget left after the
// fixed ones: a per-host listener (http01), a child apex listener or a
// conflict pin (wildcard modes).
type candidate struct {
	name     string
	hostname string
}

// keep returns the names of the candidates that fit in n listeners. Those
// already on the observed Gateway come first, so a new route never takes a
// listener away from an application being served; then new ones, each group
// in hostname order.
func keep(cands []candidate, n int, observed map[string]bool) map[string]bool {
	sorted := append([]candidate(nil), cands...)
	sort.SliceStable(sorted, func(i, j int) bool {
		oi, oj := observed[sorted[i].name], observed[sorted[j].name]
		if oi != oj {
			return oi
		}
		return sorted[i].hostname < sorted[j].hostname
	})
	kept := make(map[string]bool, len(sorted))
	for i, c := range sorted {
		if i >= n {
			break
		}
		kept[c.name] = true
	}
	return kept
}
