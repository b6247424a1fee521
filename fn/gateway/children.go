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
	// slot is the child's listener in wildcard modes.
	slot *slot
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
	if in.Spec.CertMode == v1alpha1.CertModeDNS01 {
		capCertificateNames(in, t, out)
	}
	return out
}

// capCertificateNames applies the CA's limit to the dns01 certificate, which
// carries the apex, its wildcard and two names per child. Children on the
// certificate now keep their place; the others are admitted round-robin
// across namespaces (see "Budgets" in docs/design.md). Children left out get
// no SAN and no listener.
func capCertificateNames(in *Input, t *tenancy, children []*child) {
	onCert := map[string]bool{}
	if cert := in.Observed[KeyCertificateWildcard]; cert != nil && cert.DNSNames != nil {
		for _, n := range cert.DNSNames {
			onCert[n] = true
		}
	} else {
		onCert = in.Previous.ChildApexes
	}
	var cands []budgeted
	for _, c := range children {
		if c.state == v1alpha1.ChildApexListening {
			cands = append(cands, budgeted{hostname: c.apex, namespace: c.namespace, served: onCert[c.apex]})
		}
	}
	kept := fairShare(cands, (maxCertificateDNSNames-2)/2, t)
	for _, c := range children {
		if c.state == v1alpha1.ChildApexListening && !kept[c.apex] {
			c.state = v1alpha1.ChildApexOverCertificateLimit
			c.message = fmt.Sprintf("left out of the wildcard certificate: the ACME CA issues at most %d names per certificate (the apex, its wildcard and two per child apex); give this child tenant a Gateway of its own", maxCertificateDNSNames)
		}
	}
}

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
