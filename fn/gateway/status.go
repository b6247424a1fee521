package gateway

import (
	"sort"

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
		sort.Slice(keep, func(i, j int) bool {
			if keep[i].hostname != keep[j].hostname {
				return keep[i].hostname < keep[j].hostname
			}
			return keep[i].route < keep[j].route
		})
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

// conflictStatus reports every contested hostname, in hostname order.
func conflictStatus(contests []*contest) []v1alpha1.ConflictStatus {
	out := make([]v1alpha1.ConflictStatus, 0, len(contests))
	for _, ct := range contests {
		out = append(out, v1alpha1.ConflictStatus{Hostname: ct.hostname, Winner: ct.winner.route, Losers: ct.losers})
	}
	return out
}

// childApexStatus reports every inheriting child apex, in apex order.
func childApexStatus(children []*child) []v1alpha1.ChildApexStatus {
	out := make([]v1alpha1.ChildApexStatus, 0, len(children))
	for _, c := range children {
		out = append(out, v1alpha1.ChildApexStatus{Apex: c.apex, Namespace: c.namespace, State: c.state})
	}
	return out
}

// leftOut counts the distinct hostnames and child apexes the listener budget
// left out.
func leftOut(claims []*claim, children []*child) int {
	hosts := map[string]bool{}
	for _, c := range claims {
		if c.state == v1alpha1.HostnameOverListenerLimit {
			hosts[c.hostname] = true
		}
	}
	n := len(hosts)
	for _, c := range children {
		if c.state == v1alpha1.ChildApexOverListenerLimit {
			n++
		}
	}
	return n
}
