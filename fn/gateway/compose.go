package gateway

import (
	"slices"
	"sort"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/tgwspec"
)

// Compose validates the TenantGateway and computes its composed resources
// and status from the routes and namespaces it observes.
func Compose(given Input) (*Output, error) {
	in, repeated := normalized(given)
	if errs := append(validateName(in.Name), tgwspec.Validate(in.Spec)...); len(errs) > 0 {
		return nil, &InvalidSpecError{Errors: errs}
	}
	mode := in.Spec.CertMode
	served := serving(&in)

	t := newTenancy(&in)
	children := discoverChildren(&in, t)
	claims, hostless := collectClaims(&in, t)
	judgeShape(&in, t, claims, children)
	markIdle(t, children, claims)
	orders := newLedger(&in)
	// certWaiting says why the first dns01 certificate is not composed
	// yet ("" when it is): what its listeners would serve waits.
	var certNames []string
	var certWaiting string
	if mode == v1alpha1.CertModeDNS01 {
		capCertificateNames(&in, t, children)
		certNames = orderDNS01(&in, t, orders, children)
		if certNames == nil {
			certWaiting = orders.waitMessage(orders.branch(t.owner), "the wildcard certificate")
		}
	}
	contests := resolveConflicts(claims)

	var p *plan
	if mode == v1alpha1.CertModeHTTP01 {
		p = planHTTP01(&in, t, orders, served, claims, hostless, contests)
	} else {
		p = planWildcard(&in, t, served, certWaiting, claims, hostless, contests, children)
	}
	misselected(&in, claims)

	left := leftOutOf(claims, children, p.droppedPins)
	out := &Output{
		CertMode:           mode,
		Hostnames:          hostnameStatus(&in, claims),
		Conflicts:          conflictStatus(contests),
		ConflictCount:      len(contests),
		ChildApexes:        childApexStatus(children),
		ChildApexCount:     len(children),
		HostnamelessRoutes: hostnamelessStatus(&in, t, p, hostless),
		Listeners:          len(p.listeners),
		LeftOut:            left.counts,
		HostnameStates:     countByState(claims, claimState),
		ChildApexStates:    countByState(children, childState),
	}
	planned, err := planResources(&in, t, p, children, certNames)
	if err != nil {
		return nil, err
	}
	reports, reportsLeftOut, err := routeReports(&in, t, claims)
	if err != nil {
		return nil, err
	}
	planned = append(planned, reports...)
	out.ReportsLeftOut = reportsLeftOut
	orders.close(composedCertificates(planned))
	out.Record = orders.Record()
	if out.Record != nil {
		r, err := ledgerRecordResource(&in, out.Record)
		if err != nil {
			return nil, err
		}
		planned = append(planned, r)
	}
	reapers, err := ledgerReapers(&in, orders)
	if err != nil {
		return nil, err
	}
	planned = append(planned, reapers...)
	out.OrderQuota, out.OrdersUsed = in.Quota, orders.total()

	var refused []string
	out.Resources, out.Probes, refused = guard(&in, planned)
	out.Probes = append(out.Probes, waitingProbes(&in, p, children, certNames)...)
	out.Unready = len(refused) > 0
	listeners := listenerStatus(&in, p.listeners, in.Observed[KeyGateway])
	judged := judgedListeners(&in, listeners)
	out.Ready = make(map[string]bool, len(out.Resources))
	for _, r := range out.Resources {
		out.Ready[r.Key] = ready(r.Key, in.Observed[r.Key], judged)
	}
	if _, composed := out.Ready[KeyGateway]; composed {
		out.ListenerStatus = listeners
	} else {
		judged = nil
	}
	f := findings{contests: contests, leftOut: left, causes: routeCauses(claims, contests, t.foreign, children), refused: refused, repeated: repeated}
	f.gatewayReady = gatewayReady(&in, refused, p.listeners, judged)
	out.Conditions = []Condition{
		f.gatewayReady,
		listenersReady(&in, out.LeftOut, out.HostnameStates[v1alpha1.HostnameWaiting]+out.ChildApexStates[v1alpha1.ChildApexWaiting]+min(len(certWaiting), 1)),
		routesAccepted(f.causes, len(claims), len(out.Hostnames)),
	}
	out.Digests = digestsOf(&in, f, out.ListenerStatus)
	out.Warnings = warnings(&in, f, out, served)
	return out, nil
}

// normalized is the Input the phases of Compose read: the spec defaulted and
// without repeated list entries (returned, for their warning), and the
// namespaces in name order, so that the output does not depend on the order
// the cluster listed them in.
func normalized(in Input) (Input, []string) {
	var repeated []string
	in.Spec, repeated = withoutRepeats(tgwspec.Defaulted(in.Spec))
	in.Namespaces = slices.Clone(in.Namespaces)
	sort.Slice(in.Namespaces, func(i, j int) bool { return in.Namespaces[i].Name < in.Namespaces[j].Name })
	return in, repeated
}

// waitingProbes are the Certificates that wait for their order, still
// looked up so that the order stays decided on the function's own facts
// (see Certificate orders in docs/design.md): the held http01 ones, and a
// first dns01 certificate not composed.
func waitingProbes(in *Input, p *plan, children []*child, certNames []string) []kube.Resource {
	var out []kube.Resource
	for _, s := range p.held {
		out = append(out, kube.Resource{Key: CertificateKey(s.name), Object: hostCertificate(in, s.name, s.hostname)})
	}
	if in.Spec.CertMode == v1alpha1.CertModeDNS01 && certNames == nil {
		out = append(out, kube.Resource{Key: KeyCertificateWildcard, Object: wildcardCertificate(in, childNames(in, children))})
	}
	return out
}

// planResources lists every object this mode composes, before the ownership
// guard: the Gateway, the Issuer and Certificates of the ACME modes, the
// redirect route, the zone guards of child apexes, and the namespace
// patches.
func planResources(in *Input, t *tenancy, p *plan, children []*child, certNames []string) ([]kube.Resource, error) {
	mode := in.Spec.CertMode
	planned := []kube.Resource{{Key: KeyGateway, Object: gatewayObject(in, p.listeners)}}
	switch mode {
	case v1alpha1.CertModeHTTP01:
		planned = append(planned, kube.Resource{Key: KeyIssuer, Object: issuerObject(in)})
		for _, s := range p.hostListeners {
			planned = append(planned, kube.Resource{Key: CertificateKey(s.name), Object: hostCertificate(in, s.name, s.hostname)})
		}
	case v1alpha1.CertModeDNS01:
		planned = append(planned, kube.Resource{Key: KeyIssuer, Object: issuerObject(in)})
		if certNames != nil {
			// nil: the first certificate waits for an order.
			planned = append(planned, kube.Resource{Key: KeyCertificateWildcard, Object: wildcardCertificate(in, certNames)})
		}
	case v1alpha1.CertModeExistingSecret, v1alpha1.CertModeEdge:
		// No Issuer and no Certificate: the operator's Secret, or TLS in
		// front of the Gateway.
	}
	if mode != v1alpha1.CertModeEdge {
		// The edge in front of an edge-mode Gateway performs the redirect.
		planned = append(planned, kube.Resource{Key: KeyRedirect, Object: redirectObject(in)})
	}
	guards, err := zoneGuards(in, t, children)
	if err != nil {
		return nil, err
	}
	patches, err := namespacePatches(in, t)
	if err != nil {
		return nil, err
	}
	return append(append(planned, guards...), patches...), nil
}

// composedCertificates maps the Certificates among planned to the hash of
// their names, for the order ledger.
func composedCertificates(planned []kube.Resource) map[string]string {
	out := map[string]string{}
	for _, r := range planned {
		if c, ok := r.Object.(*cmv1.Certificate); ok {
			out[r.Key] = namesHash(c.Spec.DNSNames)
		}
	}
	return out
}
