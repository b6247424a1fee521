package gateway

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// A plan is the Gateway's listeners, who each admits, and what they mean for
// each claim.
type plan struct {
	listeners []gwapiv1.Listener
	// admits holds each listener's admission, in Gateway order.
	admits []admission
	// hostListeners are the http01 listeners kept, in hostname order; each
	// also gets a Certificate.
	hostListeners []*slot
	// droppedPins are the hostnames whose pin the listener budget left out
	// (their claims may still be served, by a wildcard).
	droppedPins []string
	// held are the http01 listeners whose new Certificate waits for the
	// order budget: not composed, their Certificates still probed.
	held []*slot
}

func (p *plan) add(l gwapiv1.Listener, a admission) {
	p.listeners = append(p.listeners, l)
	p.admits = append(p.admits, a)
}

// planHTTP01 lays out the http01 Gateway: http, one HTTPS listener per
// hostname that admits only the namespace that owns it (byte order), then
// the passthrough listeners; served keeps what the Gateway serves in the
// budget.
func planHTTP01(in *Input, t *tenancy, l *ledger, served servedListeners, claims []*claim, hostless []*Route, contests []*contest) *plan {
	owners := ownersOf(claims, contests)
	pass, passAdmits := passthroughListeners(in, t, claims, hostless)

	slots := make([]*slot, len(owners))
	all := make([]slot, len(owners))
	for i, o := range owners {
		all[i] = slot{prefix: prefixHTTPS, subject: o.hostname, hostname: o.hostname, namespace: o.namespace, admit: pinTo(o.namespace)}
		slots[i] = &all[i]
	}
	placeSlots(t, served, slots, MaxListeners-1-len(pass), fixedNames(pass), func(listener string) string { return listenerCertificateName(in.Name, listener) })

	p := &plan{held: orderHTTP01(in, t, l, slots)}
	p.add(httpListener(t), admission{kind: admitHTTP})
	for _, s := range slots {
		if s.kept {
			p.hostListeners = append(p.hostListeners, s)
			p.add(httpsListener(s.name, s.hostname, listenerCertificateName(in.Name, s.name), withKinds443(in, gwapiv1.HTTPSProtocolType, s.admit.allowedRoutes(t))), s.admit)
		}
	}
	for i := range pass {
		p.add(pass[i], passAdmits[i])
	}

	// Claims and slots are both in hostname order: walk them together.
	i := 0
	for _, c := range unjudged(claims) {
		for slots[i].hostname != c.hostname {
			i++
		}
		switch s := slots[i]; {
		case s.invalid != "":
			c.state, c.message = v1alpha1.HostnameInvalid, s.invalid
		case s.waiting != "":
			c.state, c.message, c.recording = v1alpha1.HostnameWaiting, s.waiting, s.recording
		case s.kept:
			c.state, c.message, c.listener = v1alpha1.HostnameListening, "listener "+s.name, s.name
		default:
			c.state, c.message = overLimit()
		}
	}
	return p
}

// planWildcard lays out the dns01, existingSecret and edge Gateways: the
// apex and its wildcard, one listener per inheriting child apex, a pin per
// hostname whose serving listener would not admit (only) its owner, then the
// passthrough listeners. served keeps what the Gateway serves in the budget;
// certWaiting, when set, says why the dns01 certificate is not composed yet,
// and is added to what each covered hostname is told.
func planWildcard(in *Input, t *tenancy, served servedListeners, certWaiting string, claims []*claim, hostless []*Route, contests []*contest, children []*child) *plan {
	edge := in.Spec.CertMode == v1alpha1.CertModeEdge
	wild, apex := ListenerHTTPS, ListenerHTTPSApex
	if edge {
		wild, apex = ListenerEdge, ListenerEdgeApex
	}
	apexAdmit := admission{kind: admitApex}
	fixed := []*slot{
		{name: wild, hostname: "*." + in.Spec.Apex, admit: apexAdmit, kept: true},
		{name: apex, hostname: in.Spec.Apex, admit: apexAdmit, kept: true},
	}
	var pass []gwapiv1.Listener
	var passAdmits []admission
	if !edge {
		pass, passAdmits = passthroughListeners(in, t, claims, hostless)
	}

	c := newCoverage(fixed)
	c.dropChildren(children)
	named := c.childSlots(in, served, children)
	owners := ownersOf(claims, contests)
	pins := c.pinSlots(in, t, owners)
	pins = append(pins, c.apexPins(in, t, children, claims, hostless)...)
	named = append(named, pins...)
	slices.SortStableFunc(named, func(a, b *slot) int { return strings.Compare(a.hostname, b.hostname) })
	taken := fixedNames(pass)
	taken[wild], taken[apex] = true, true
	budget := MaxListeners - len(fixed) - len(pass)
	if !edge {
		budget-- // http
	}
	placeSlots(t, served, named, budget, taken, nil)
	keepPinsWhole(pins)
	keepApexPins(children)
	judgeChildSlots(in, children)
	c.isolate(t, owners, false)
	c.isolate(t, reaches(claims), true)

	p := wildcardListeners(in, t, fixed, children, pins)
	for i := range pass {
		p.add(pass[i], passAdmits[i])
	}

	c.dropChildren(children)
	for _, cl := range unjudged(claims) {
		cl.state, cl.message, cl.listener = c.cover(in, t, cl.hostname, cl.namespace)
		if cl.state == v1alpha1.HostnameCovered && certWaiting != "" {
			// Its listener has no certificate until the order is made.
			cl.message = text.Truncate(cl.message + "; " + certWaiting)
		}
	}
	c.unenforced(in, t, claims)
	return p
}

// wildcardListeners are the listeners of a wildcard mode but passthrough, in
// Gateway order: http (but in edge), the apex and its wildcard, the child
// apexes, the pins.
func wildcardListeners(in *Input, t *tenancy, fixed []*slot, children []*child, pins []*slot) *plan {
	edge := in.Spec.CertMode == v1alpha1.CertModeEdge
	p := &plan{}
	add := func(s *slot) {
		if edge {
			p.add(edgeListener(s.name, s.hostname, withHTTPRouteKind(s.admit.allowedRoutes(t))), s.admit)
			return
		}
		p.add(httpsListener(s.name, s.hostname, certificateRef(in), withKinds443(in, gwapiv1.HTTPSProtocolType, s.admit.allowedRoutes(t))), s.admit)
	}
	if !edge {
		p.add(httpListener(t), admission{kind: admitHTTP})
	}
	for _, s := range fixed {
		add(s)
	}
	for _, ch := range children {
		if ch.slot != nil && ch.slot.kept {
			add(ch.slot)
		}
	}
	for _, s := range pins {
		if s.kept {
			add(s)
		} else if s.invalid == "" {
			p.droppedPins = append(p.droppedPins, s.hostname)
		}
	}
	return p
}

// judgeChildSlots reports the listening child apexes whose listener the
// budget left out, or that could not be named.
func judgeChildSlots(in *Input, children []*child) {
	for _, ch := range listeningChildren(children) {
		switch {
		case ch.slot.invalid != "":
			ch.state, ch.message = v1alpha1.ChildApexInvalid, ch.slot.invalid
		case !ch.slot.kept && ch.idle:
			ch.state, ch.message = v1alpha1.ChildApexIdle, idleMessage
		case !ch.slot.kept:
			ch.state, ch.message = v1alpha1.ChildApexOverListenerLimit, fmt.Sprintf("left out: the Gateway would exceed %d listeners; %s", MaxListeners, budgetAdvice(in))
		}
	}
}

// placeSlots decides which slots get a listener, then names those: first the
// budget (by hostname, what is served now keeping its place), then names for
// the slots kept, which are the only ones that must not collide. Naming only
// what is kept keeps a Gateway with many thousand hostnames cheap. A name
// that would pass its limit takes the hash form (certificateName, when set,
// is the Certificate each listener gets, whose name must fit too); a kept
// slot whose name is still taken (a 64-bit collision) loses its place.
func placeSlots(t *tenancy, served servedListeners, slots []*slot, n int, taken map[string]bool, certificateName func(listener string) string) {
	keepSlots(slots, n, served.hostnames(), t)
	var kept []*slot
	for _, s := range slots {
		if s.kept {
			kept = append(kept, s)
		}
	}
	fits := func(name string) bool {
		return len(name) <= maxListenerName && (certificateName == nil || len(certificateName(name)) <= maxObjectName)
	}
	allocateNames(kept, served, taken, fits)
	for _, s := range kept {
		s.kept = s.invalid == ""
	}
}

// keepSlots applies the listener budget to the slots, by hostname. A slot is
// served when the observed Gateway (or the status) has a listener of its
// hostname, one of hosts.
func keepSlots(slots []*slot, n int, hosts map[string]bool, t *tenancy) {
	cands := make([]budgeted, 0, len(slots))
	for _, s := range slots {
		held := hosts[s.hostname] || s.held
		s.served = held
		if s.invalid != "" || s.idle && !held {
			continue
		}
		cands = append(cands, budgeted{hostname: s.hostname, namespace: cmp.Or(s.payer, s.namespace), served: held, spare: s.idle})
	}
	kept := fairShare(cands, n, t)
	for _, s := range slots {
		s.kept = s.invalid == "" && kept[s.hostname]
	}
}

// overLimit judges a hostname left out by the listener budget. Its message
// is written only for the claims status.hostnames lists (see
// hostnameStatus): a Gateway can leave hundreds of thousands out.
func overLimit() (v1alpha1.HostnameState, string) {
	return v1alpha1.HostnameOverListenerLimit, ""
}

// overLimitMessage is the message of a hostname left out by the listener
// budget.
func overLimitMessage(in *Input, h string) string {
	// Concatenated, not formatted: one per hostname left out, thousands on
	// a large Gateway.
	return h + " was left out: the Gateway would exceed " + maxListenersText + " listeners; " + budgetAdvice(in)
}

// maxListenersText is MaxListeners as overLimitMessage writes it.
var maxListenersText = strconv.Itoa(MaxListeners)

// budgetAdvice is what to do about the listener limit in this mode.
func budgetAdvice(in *Input) string {
	if in.Spec.CertMode == v1alpha1.CertModeHTTP01 {
		return "certMode dns01 serves every hostname under the apex with a fixed set of listeners"
	}
	return "every child apex and every pinned hostname takes a listener: give large child tenants a Gateway of their own, or resolve hostname conflicts"
}

// fixedNames are the names no hostname-named listener may take.
func fixedNames(pass []gwapiv1.Listener) map[string]bool {
	taken := map[string]bool{ListenerHTTP: true}
	for _, l := range pass {
		taken[string(l.Name)] = true
	}
	return taken
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

// httpListener is listener #1: port 80, any hostname, admitting the owner and
// cert-manager (see Who may attach in docs/design.md). It carries the
// redirect route and the ACME HTTP-01 challenges.
func httpListener(t *tenancy) gwapiv1.Listener {
	return gwapiv1.Listener{
		Name:          ListenerHTTP,
		Port:          portHTTP,
		Protocol:      gwapiv1.HTTPProtocolType,
		AllowedRoutes: admission{kind: admitHTTP}.allowedRoutes(t),
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
		Port:     portHTTPS,
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
		Port:          portHTTP,
		Protocol:      gwapiv1.HTTPProtocolType,
		AllowedRoutes: a,
	}
}

// passthroughListeners are the tls-<svc> listeners, in spec order: TLS is not
// terminated, the backend presents its own certificate. Each admits only the
// namespace that holds <svc>.<apex> (its publisher, or the winner when
// contested), or none when no route claims it: a wildcard TLSRoute of
// another publisher would otherwise attach too. Envoy makes one filter chain
// per TLSRoute, and two chains for one server name make it refuse the whole
// port-443 listener, so when two routes of that namespace would attach the
// listener admits neither and their claims say why (see Claims in
// docs/design.md).
func passthroughListeners(in *Input, t *tenancy, claims []*claim, hostless []*Route) ([]gwapiv1.Listener, []admission) {
	out := make([]gwapiv1.Listener, 0, len(in.Spec.TLSPassthroughServices))
	admits := make([]admission, 0, len(in.Spec.TLSPassthroughServices))
	for _, s := range in.Spec.TLSPassthroughServices {
		hostname := string(s) + "." + in.Spec.Apex
		name := PassthroughListenerName(string(s))
		a := pinTo(passthroughHolder(in, claims, hostless, name, hostname))
		h := gwapiv1.Hostname(hostname)
		mode := gwapiv1.TLSModePassthrough
		out = append(out, gwapiv1.Listener{
			Name:          gwapiv1.SectionName(name),
			Hostname:      &h,
			Port:          portHTTPS,
			Protocol:      gwapiv1.TLSProtocolType,
			TLS:           &gwapiv1.ListenerTLSConfig{Mode: &mode},
			AllowedRoutes: withKinds443(in, gwapiv1.TLSProtocolType, a.allowedRoutes(t)),
		})
		admits = append(admits, a)
	}
	return out, admits
}

// passthroughHolder is the namespace a passthrough listener admits: the one
// whose routes hold its hostname, "" (none) when no route does or when two
// routes of that namespace would attach, whose claims it then marks.
func passthroughHolder(in *Input, claims []*claim, hostless []*Route, listener, hostname string) string {
	holder := ""
	for _, c := range claims {
		if c.listener == listener && c.state == v1alpha1.HostnamePassthrough {
			holder = c.namespace
		}
	}
	if holder == "" {
		return ""
	}
	routes := holderRoutes(in, claims, hostless, holder, listener, hostname)
	if len(routes) < 2 {
		return holder
	}
	for _, c := range claims {
		if c.listener == listener && c.state == v1alpha1.HostnamePassthrough {
			c.state, c.listener, c.duplicate = v1alpha1.HostnameConflict, "", true
			c.message = fmt.Sprintf("routes %s all attach to TLS passthrough listener %s; two filter chains for one server name make the implementation refuse the whole port-443 listener, so %s admits none of them until only one remains", strings.Join(routes, ", "), listener, listener)
		}
	}
	return ""
}

// attachesToPassthrough reports whether the claim's route attaches to the
// passthrough listener of hostname: a claim of it, or a TLSRoute wildcard
// over it that selects the listener.
func attachesToPassthrough(c *claim, listener, hostname string) bool {
	if c.hostname == hostname && c.state == v1alpha1.HostnamePassthrough {
		return true
	}
	return c.kind == KindTLSRoute && isWildcard(c.hostname) && under(hostname, base(c.hostname)) && hostname != base(c.hostname) && selectsAny(c.refs, listener, portHTTPS)
}

// holderRoutes are the routes of the holder's namespace that would attach
// to the passthrough listener of hostname, sorted: its claims of hostname,
// its TLSRoute wildcards over it, and its TLSRoutes without hostnames (which
// v1alpha2 allows, and which attach to every TLS listener admitting them).
func holderRoutes(in *Input, claims []*claim, hostless []*Route, holder, listener, hostname string) []string {
	var routes []string
	for _, c := range claims {
		if c.namespace == holder && !slices.Contains(routes, c.route) && attachesToPassthrough(c, listener, hostname) {
			routes = append(routes, c.route)
		}
	}
	for _, r := range hostless {
		if r.Kind == KindTLSRoute && r.Namespace == holder && selectsAny(parentRefsTo(in, r), listener, portHTTPS) {
			routes = append(routes, r.ID())
		}
	}
	slices.Sort(routes)
	return routes
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
