package gateway

import (
	"sort"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// A child is an inheriting child tenant's apex.
type child struct {
	apex      string
	namespace string
	state     v1alpha1.ChildApexState
	// listener is the child's listener name in wildcard modes.
	listener string
}

// maxCertificateDNSNames is the ACME CA's limit of names per certificate.
const maxCertificateDNSNames = 100

// discoverChildren finds the inheriting child apexes: namespaces publishing
// through this Gateway (other than its own) whose host label names an apex
// other than ours. A child apex outside our apex is reported and gets
// nothing: our certificate cannot cover it, and the admission policy (L2)
// would refuse the whole Gateway for its listener.
func discoverChildren(in *Input) []*child {
	byApex := map[string]*child{}
	for _, n := range in.Namespaces {
		if n.Name == in.Namespace || n.Labels[LabelNamespaceGateway] != in.Namespace {
			continue
		}
		a := n.Labels[LabelNamespaceHost]
		if a == "" || a == in.Spec.Apex {
			continue
		}
		// Namespaces arrive sorted by name, so the first one wins a
		// shared apex and the choice is stable.
		if _, ok := byApex[a]; ok {
			continue
		}
		c := &child{apex: a, namespace: n.Name, state: v1alpha1.ChildApexListening, listener: ChildListenerName(in.Spec.CertMode, a)}
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
		capCertificateNames(out)
	}
	return out
}

// capCertificateNames applies the CA's limit to the dns01 certificate, which
// carries the apex, its wildcard and two names per child: children past the
// limit are left out of it, and so get no listener either.
func capCertificateNames(children []*child) {
	n := 2
	for _, c := range children {
		if c.state != v1alpha1.ChildApexListening {
			continue
		}
		if n+2 > maxCertificateDNSNames {
			c.state = v1alpha1.ChildApexOverListenerLimit
			continue
		}
		n += 2
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
