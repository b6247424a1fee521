package gateway

import (
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// hostnameStatus reports every claim, sorted by hostname then route.
func hostnameStatus(claims []*claim) []v1alpha1.HostnameStatus {
	out := make([]v1alpha1.HostnameStatus, 0, len(claims))
	for _, c := range claims {
		out = append(out, v1alpha1.HostnameStatus{Hostname: c.hostname, Route: c.route, State: c.state, Message: c.message})
	}
	return out
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
