package gateway

import (
	"fmt"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// A plan is the Gateway's listeners and what they mean for each claim.
type plan struct {
	listeners []gwapiv1.Listener
	// exact and wildcard index the served listeners by hostname and by the
	// domain a wildcard listener covers; dropped holds the child apexes the
	// budget left out.
	exact, wildcard map[string]string
	dropped         map[string]bool
	// hostListeners are the http01 hostnames that got their own listener,
	// in byte order; each also gets a Certificate.
	hostListeners []string
	// served maps a listener name to its hostname, for status messages.
	served map[string]string
}

// planHTTP01 lays out SPEC §5.2 for http01: http, one HTTPS listener per
// hostname (byte order), then the passthrough listeners.
func planHTTP01(in *Input, claims []*claim, contests []*contest) *plan {
	pins := pinsOf(contests)
	pass := passthroughListeners(in)

	var hosts []string
	var cands []candidate
	for _, c := range unjudged(claims) {
		if len(hosts) > 0 && hosts[len(hosts)-1] == c.hostname {
			continue
		}
		hosts = append(hosts, c.hostname)
		cands = append(cands, candidate{name: HostListenerName(c.hostname), hostname: c.hostname})
	}
	kept := keep(cands, MaxListeners-1-len(pass), in.served)

	p := &plan{served: map[string]string{}}
	p.listeners = append(p.listeners, httpListener(in))
	// Unpinned listeners share one (read-only) AllowedRoutes.
	shared := withKinds443(selectorLabel(in))
	for _, h := range hosts {
		name := HostListenerName(h)
		if !kept[name] {
			continue
		}
		p.hostListeners = append(p.hostListeners, h)
		a := shared
		if ns, ok := pins[h]; ok {
			a = withKinds443(selectorPin(in, ns))
		}
		p.listeners = append(p.listeners, httpsListener(name, h, HostCertificateName(in.Name, h), a))
	}
	p.listeners = append(p.listeners, pass...)

	for _, c := range unjudged(claims) {
		name := HostListenerName(c.hostname)
		if kept[name] {
			c.state, c.message = v1alpha1.HostnameListening, "listener "+name
			continue
		}
		c.state, c.message = overLimit(c.hostname)
	}
	return p
}

// planWildcard lays out SPEC §5.2 for dns01, existingSecret (rows 1, 2b, 2c,
// 2d, 4) and edge (row 3): fixed wildcard and apex listeners, one listener
// per inheriting child apex, a pin per contested hostname that no listener
// serves exactly yet, then the passthrough listeners.
func planWildcard(in *Input, claims []*claim, contests []*contest, children []*child) *plan { //nolint:gocyclo // One flat pass per listener group; splitting it hides the layout.
	mode := in.Spec.CertMode
	pins := pinsOf(contests)
	edge := mode == v1alpha1.CertModeEdge
	cert := certificateRef(in)

	wild, apex := ListenerHTTPS, ListenerHTTPSApex
	if edge {
		wild, apex = ListenerEdge, ListenerEdgeApex
	}
	fixed := []struct{ name, hostname string }{{wild, "*." + in.Spec.Apex}, {apex, in.Spec.Apex}}
	exact := map[string]bool{"*." + in.Spec.Apex: true, in.Spec.Apex: true}
	var pass []gwapiv1.Listener
	nFixed := len(fixed)
	if !edge {
		pass = passthroughListeners(in)
		nFixed++ // http
	}

	var cands []candidate
	for _, c := range listeningChildren(children) {
		cands = append(cands, candidate{name: c.listener, hostname: "*." + c.apex})
		exact["*."+c.apex] = true
	}
	var pinHosts []string
	for _, ct := range contests {
		if exact[ct.hostname] {
			continue // The listener that serves it exactly is pinned instead.
		}
		name := PinListenerName(mode, ct.hostname)
		if len(name) > maxListenerName {
			markHostname(claims, ct.hostname, v1alpha1.HostnameInvalid, fmt.Sprintf("the listener that pins this contested hostname, %s, would be %d characters, over the limit of %d", name, len(name), maxListenerName))
			continue
		}
		pinHosts = append(pinHosts, ct.hostname)
		cands = append(cands, candidate{name: name, hostname: ct.hostname})
	}
	kept := keep(cands, MaxListeners-nFixed-len(pass), in.served)

	p := &plan{served: map[string]string{}}
	add := func(name, hostname string) {
		p.served[name] = hostname
		a := selectorFor(in, pins, hostname)
		if edge {
			p.listeners = append(p.listeners, edgeListener(name, hostname, a))
			return
		}
		p.listeners = append(p.listeners, httpsListener(name, hostname, cert, withKinds443(a)))
	}
	if !edge {
		p.listeners = append(p.listeners, httpListener(in))
	}
	for _, f := range fixed {
		add(f.name, f.hostname)
	}
	for _, c := range listeningChildren(children) {
		if !kept[c.listener] {
			c.state = v1alpha1.ChildApexOverListenerLimit
			continue
		}
		add(c.listener, "*."+c.apex)
	}
	for _, h := range pinHosts {
		if name := PinListenerName(mode, h); kept[name] {
			add(name, h)
		}
	}
	p.listeners = append(p.listeners, pass...)

	p.exact, p.wildcard, p.dropped = map[string]string{}, map[string]string{}, map[string]bool{}
	for name, h := range p.served {
		if isWildcard(h) {
			p.wildcard[base(h)] = name
		} else {
			p.exact[h] = name
		}
	}
	for _, c := range children {
		if c.state == v1alpha1.ChildApexOverListenerLimit {
			p.dropped[c.apex] = true
		}
	}
	for _, c := range unjudged(claims) {
		c.state, c.message = p.cover(in, c.hostname)
	}
	return p
}

// cover judges a hostname in a wildcard mode by the listener that would
// serve it: the exact one if any, else the wildcard of the longest domain
// above it (Gateway API wildcards match any number of labels, but not the
// domain itself).
func (p *plan) cover(in *Input, h string) (v1alpha1.HostnameState, string) {
	if name, ok := p.exact[h]; ok {
		return v1alpha1.HostnameCovered, fmt.Sprintf("served by listener %s (%s)", name, h)
	}
	if isWildcard(h) {
		if name, ok := p.wildcard[base(h)]; ok {
			return v1alpha1.HostnameCovered, fmt.Sprintf("served by listener %s (%s)", name, h)
		}
	}
	var best, domain string
	eachDomain(parent(base(h)), func(d string) bool {
		best, domain = p.wildcard[d], d
		return best != ""
	})
	// A child apex whose listener was left out, more specific than the
	// wildcard that would serve the hostname instead, means that
	// wildcard's certificate does not cover it. A contested hostname whose
	// pin was left out has no listener at all.
	if best == "" || eachDomain(base(h), func(d string) bool { return len(d) > len(domain) && p.dropped[d] }) {
		return overLimit(h)
	}
	msg := fmt.Sprintf("served by listener %s (*.%s)", best, domain)
	if in.Spec.CertMode != v1alpha1.CertModeEdge && !oneLabelBelow(h, domain) {
		msg += fmt.Sprintf("; the wildcard certificate for *.%s covers only names one label below %s, so clients will see a name mismatch", domain, domain)
	}
	return v1alpha1.HostnameCovered, msg
}

func overLimit(h string) (v1alpha1.HostnameState, string) {
	return v1alpha1.HostnameOverListenerLimit, fmt.Sprintf("%s was left out: the Gateway would exceed %d listeners; certMode dns01 serves every hostname under the apex with a fixed set of listeners", h, MaxListeners)
}

func markHostname(claims []*claim, h string, s v1alpha1.HostnameState, msg string) {
	for _, c := range claims {
		if c.hostname == h && c.state == "" {
			c.state, c.message = s, msg
		}
	}
}

// pinsOf maps each contested hostname to its winner's namespace.
func pinsOf(contests []*contest) map[string]string {
	m := make(map[string]string, len(contests))
	for _, ct := range contests {
		m[ct.hostname] = ct.winner.namespace
	}
	return m
}

// certificateRef is the Secret the wildcard-mode HTTPS listeners serve.
func certificateRef(in *Input) string {
	switch in.Spec.CertMode {
	case v1alpha1.CertModeDNS01:
		return WildcardCertificateName(in.Name)
	case v1alpha1.CertModeExistingSecret:
		return in.Spec.WildcardSecretRef.Name
	default:
		return ""
	}
}

// httpListener is listener #1: port 80, any hostname, SEL-HTTP. It carries the
// redirect route and the ACME HTTP-01 challenges.
func httpListener(in *Input) gwapiv1.Listener {
	return gwapiv1.Listener{
		Name:          ListenerHTTP,
		Port:          80,
		Protocol:      gwapiv1.HTTPProtocolType,
		AllowedRoutes: selectorHTTP(in),
	}
}

// httpsListener terminates TLS for one hostname with one Secret of the
// TenantGateway's namespace.
func httpsListener(name, hostname, secret string, a *gwapiv1.AllowedRoutes) gwapiv1.Listener {
	h := gwapiv1.Hostname(hostname)
	mode := gwapiv1.TLSModeTerminate
	return gwapiv1.Listener{
		Name:     gwapiv1.SectionName(name),
		Hostname: &h,
		Port:     443,
		Protocol: gwapiv1.HTTPSProtocolType,
		TLS: &gwapiv1.ListenerTLSConfig{
			Mode:            &mode,
			CertificateRefs: []gwapiv1.SecretObjectReference{{Name: gwapiv1.ObjectName(secret)}},
		},
		AllowedRoutes: a,
	}
}

// edgeListener serves plain HTTP for one hostname: TLS ends in front of the
// Gateway.
func edgeListener(name, hostname string, a *gwapiv1.AllowedRoutes) gwapiv1.Listener {
	h := gwapiv1.Hostname(hostname)
	return gwapiv1.Listener{
		Name:          gwapiv1.SectionName(name),
		Hostname:      &h,
		Port:          80,
		Protocol:      gwapiv1.HTTPProtocolType,
		AllowedRoutes: a,
	}
}

// passthroughListeners are the tls-<svc> listeners, in spec order: TLS is not
// terminated, the backend presents its own certificate.
func passthroughListeners(in *Input) []gwapiv1.Listener {
	out := make([]gwapiv1.Listener, 0, len(in.Spec.TLSPassthroughServices))
	for _, s := range in.Spec.TLSPassthroughServices {
		h := gwapiv1.Hostname(string(s) + "." + in.Spec.Apex)
		mode := gwapiv1.TLSModePassthrough
		out = append(out, gwapiv1.Listener{
			Name:          gwapiv1.SectionName(PassthroughListenerName(string(s))),
			Hostname:      &h,
			Port:          443,
			Protocol:      gwapiv1.TLSProtocolType,
			TLS:           &gwapiv1.ListenerTLSConfig{Mode: &mode},
			AllowedRoutes: withKinds443(selectorLabel(in)),
		})
	}
	return out
}

// childNames are the dns01 certificate's names: apex, *.apex, then c, *.c per
// child with a listener, without repeats.
func childNames(in *Input, children []*child) []string {
	names := []string{in.Spec.Apex, "*." + in.Spec.Apex}
	seen := map[string]bool{names[0]: true, names[1]: true}
	for _, c := range children {
		if c.state != v1alpha1.ChildApexListening {
			continue
		}
		for _, n := range []string{c.apex, "*." + c.apex} {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	return names
}
