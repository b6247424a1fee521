package main

import (
	"fmt"
	"slices"
	"strings"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/tgwspec"
)

// servedStates are the states in which the function serves a claim.
var servedStates = map[v1alpha1.HostnameState]bool{
	v1alpha1.HostnameListening: true, v1alpha1.HostnameCovered: true, v1alpha1.HostnamePassthrough: true,
}

// checkWinners compares, for an http01 TenantGateway, who serves each
// claimed hostname now and after the takeover. The Cozystack controller
// gives each hostname's listener to the first claim ranked cozy-*
// namespaces first, then by namespace and route name, and its listener
// admits every labelled namespace, losers included; the function serves
// the claim of the namespace delegated the most specific domain (status's
// winners, from the function's own code). In dns01 and existingSecret the
// controller resolves nothing: only hostnames the function stops serving
// are reported.
func checkWinners(s *snapshot, t *v1alpha1.TenantGateway, out *gateway.Output, r *report) {
	served := map[string][]string{}
	judged := map[string]v1alpha1.HostnameStatus{}
	for _, h := range out.Hostnames {
		judged[h.Hostname+" "+h.Route] = h
		if servedStates[h.State] {
			served[h.Hostname] = append(served[h.Hostname], h.Route)
		}
	}
	claims := controllerClaims(s, t)
	changed := 0
	for _, h := range sortedKeys(claims) {
		cs := claims[h]
		if mode := tgwspec.Defaulted(t.Spec).CertMode; mode == v1alpha1.CertModeHTTP01 && !slices.Contains(served[h], cs[0]) {
			changed++
			if len(served[h]) > 0 {
				r.add(blocker, topicWinners, "TenantGateway %s/%s, %s: the controller serves %s (it ranks cozy-* namespaces first, then by name); the function serves %s (it ranks the namespace delegated the most specific domain first): the backend changes at the takeover",
					t.Namespace, t.Name, h, cs[0], strings.Join(served[h], ", "))
			} else {
				r.add(blocker, topicWinners, "TenantGateway %s/%s, %s: the controller serves %s; the function serves no route for it%s",
					t.Namespace, t.Name, h, cs[0], because(judged[h+" "+cs[0]]))
			}
			cs = cs[1:]
		}
		for _, c := range cs {
			if !slices.Contains(served[h], c) && labelled(s, c, t.Namespace) {
				r.add(warning, topicWinners, "TenantGateway %s/%s, %s: %s, admitted by the controller's listener (a lost conflict is only reported), is not served by the function%s",
					t.Namespace, t.Name, h, c, because(judged[h+" "+c]))
			}
		}
	}
	if changed == 0 {
		r.add(info, topicWinners, "TenantGateway %s/%s: every hostname keeps the route that serves it (%d claimed)", t.Namespace, t.Name, len(claims))
	}
}

func because(h v1alpha1.HostnameStatus) string {
	if h.State == "" {
		return " (the function does not admit its namespace)"
	}
	if h.Message == "" {
		return fmt.Sprintf(" (%s)", h.State)
	}
	return fmt.Sprintf(" (%s: %s)", h.State, h.Message)
}

// controllerClaims are the Cozystack controller's claims by hostname, each
// list in its order (the first wins): routes of the TenantGateway's
// namespace, its attached namespaces and those labelled for it that attach
// to its Gateway. Challenge routes of cert-manager claim nothing.
func controllerClaims(s *snapshot, t *v1alpha1.TenantGateway) map[string][]string {
	allowed := map[string]bool{t.Namespace: true}
	for _, a := range attached(t) {
		allowed[a] = true
	}
	for _, n := range s.Namespaces {
		if n.Labels[kube.LabelNamespaceGateway] == t.Namespace {
			allowed[n.Name] = true
		}
	}
	byHost := map[string][]claim{}
	for _, rt := range s.Routes {
		if !allowed[rt.Namespace] || rt.Solver || !attachesTo(rt, t) {
			continue
		}
		for _, h := range rt.Hostnames {
			byHost[h] = append(byHost[h], claim{rt.Namespace, rt.Name, rt.ID()})
		}
	}
	out := make(map[string][]string, len(byHost))
	for h, cs := range byHost {
		slices.SortStableFunc(cs, controllerOrder)
		for _, c := range cs {
			if !slices.Contains(out[h], c.id) {
				out[h] = append(out[h], c.id)
			}
		}
	}
	return out
}

// A claim is one route's claim on a hostname, as the controller lists it.
type claim struct{ ns, name, id string }

// controllerOrder is the Cozystack controller's ranking of the claims on
// one hostname: cozy-* namespaces first, then by namespace, then by route
// name (bytes).
func controllerOrder(a, b claim) int {
	ac, bc := strings.HasPrefix(a.ns, "cozy-"), strings.HasPrefix(b.ns, "cozy-")
	switch {
	case ac != bc && ac:
		return -1
	case ac != bc:
		return 1
	case a.ns != b.ns:
		return strings.Compare(a.ns, b.ns)
	}
	return strings.Compare(a.name, b.name)
}

// labelled reports whether the route (kind/namespace/name) is in a
// namespace labelled for owner: the controller's HTTPS listeners admit it.
func labelled(s *snapshot, id, owner string) bool {
	parts := strings.SplitN(id, "/", 3)
	if len(parts) != 3 {
		return false
	}
	n := s.Namespaces[parts[1]]
	return n != nil && n.Labels[kube.LabelNamespaceGateway] == owner
}
