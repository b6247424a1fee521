package gateway

import (
	"fmt"
	"sort"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// A child is an inheriting child tenant's apex.
type child struct {
	apex      string
	namespace string
	state     v1alpha1.ChildApexState
	message   string
	// slot is the child's listener in wildcard modes; apexPin the
	// listener of its bare apex, when it has one (see apexPins).
	slot, apexPin *slot
	// idle: no route of a namespace delegated this apex claims a hostname
	// that may be served (see Budgets in docs/design.md).
	idle bool
	// held: its listener is served, or (dns01) its names are on the
	// certificate served now.
	held bool
}

// maxCertificateDNSNames is the ACME CA's limit of names per certificate.
const maxCertificateDNSNames = 100

// discoverChildren finds the inheriting child apexes: namespaces publishing
// through this Gateway (other than its own) whose host label names an apex
// other than ours. A child apex outside our apex is reported and gets
// nothing: our certificate cannot cover it, and the admission policy (L2)
// would refuse the whole Gateway for its listener.
func discoverChildren(in *Input, t *tenancy) []*child {
	byApex := map[string]*child{}
	for _, n := range in.Namespaces {
		if n.Name == in.Namespace || !t.admitted(n.Name) {
			continue
		}
		a := t.host(n.Name)
		if a == "" || a == in.Spec.Apex {
			continue
		}
		// Namespaces arrive sorted by name, so the first one wins a
		// shared apex and the choice is stable.
		if _, ok := byApex[a]; ok {
			continue
		}
		c := &child{apex: a, namespace: n.Name, state: v1alpha1.ChildApexListening}
		if !validHostname(a) || isWildcard(a) || !under(a, in.Spec.Apex) {
			c.state = v1alpha1.ChildApexOutsideApex
		}
		byApex[a] = c
	}
	out := make([]*child, 0, len(byApex))
	for _, c := range byApex {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].apex < out[j].apex })
	return out
}

// markIdle marks the child apexes no route uses: no claim still to be
// judged (delegation and shape settled) comes from a namespace delegated the
// apex. An idle zone holds no new listener and no new certificate name, and
// gives up what it holds first, so that empty nested tenants cannot hoard
// the budgets (see Budgets in docs/design.md).
func markIdle(t *tenancy, children []*child, claims []*claim) {
	used := map[string]bool{}
	for _, c := range claims {
		if c.state == "" {
			used[t.host(c.namespace)] = true
		}
	}
	for _, ch := range children {
		ch.idle = !used[ch.apex]
	}
}

// capCertificateNames applies the CA's limit to the dns01 certificate, which
// carries the apex, its wildcard and two names per child. Children on the
// certificate now keep their place; the others are admitted round-robin
// across namespaces (see "Budgets" in docs/design.md). Children left out get
// no SAN and no listener. Names of gone zones keep no place: they stay on
// the certificate only until the next order (orderDNS01).
func capCertificateNames(in *Input, t *tenancy, children []*child) {
	onCert := servedCertificateNames(in)
	var cands []budgeted
	for _, c := range children {
		c.held = c.held || onCert[c.apex]
		if c.state == v1alpha1.ChildApexListening && (!c.idle || onCert[c.apex]) {
			cands = append(cands, budgeted{hostname: c.apex, namespace: c.namespace, served: onCert[c.apex], spare: c.idle})
		}
	}
	kept := fairShare(cands, (maxCertificateDNSNames-2)/2, t)
	for _, c := range children {
		switch {
		case c.state != v1alpha1.ChildApexListening || kept[c.apex]:
		case c.idle:
			c.state, c.message = v1alpha1.ChildApexIdle, idleMessage
		default:
			c.state = v1alpha1.ChildApexOverCertificateLimit
			c.message = fmt.Sprintf("left out of the wildcard certificate: the ACME CA issues at most %d names per certificate (the apex, its wildcard and two per child apex); give this child tenant a Gateway of its own", maxCertificateDNSNames)
		}
	}
}

// servedCertificateNames are the names of the dns01 certificate served now:
// the observed Certificate's, else the child apexes status remembers.
func servedCertificateNames(in *Input) map[string]bool {
	cert := in.Observed[KeyCertificateWildcard]
	if cert == nil || cert.DNSNames == nil {
		return in.Previous.ChildApexes
	}
	onCert := make(map[string]bool, len(cert.DNSNames))
	for _, n := range cert.DNSNames {
		onCert[n] = true
	}
	return onCert
}

// idleMessage explains ChildApexIdle.
const idleMessage = "no route of this child tenant claims a hostname in its zone, so it holds no listener or certificate name; the first route that does gets one"

// listeningChildren are the children whose apexes get a listener.
func listeningChildren(children []*child) []*child {
	var out []*child
	for _, c := range children {
		if c.state == v1alpha1.ChildApexListening {
			out = append(out, c)
		}
	}
	return out
}
