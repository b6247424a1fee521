package envoy

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	tgwv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// The checks Judge makes; a Disagreement names the one it failed.
const (
	// CheckGatewayAccepted: the Gateway is Accepted with every listener
	// valid.
	CheckGatewayAccepted = "GatewayAccepted"
	// CheckListenerHealthy: a listener is Accepted, Programmed and
	// ResolvedRefs (so an HTTPS listener's certificate resolves), and not
	// Conflicted.
	CheckListenerHealthy = "ListenerHealthy"
	// CheckServedAccepted: a route the function reports served for a
	// hostname (Listening, Covered, Passthrough) is Accepted on a parentRef
	// that reaches a listener whose hostname matches it.
	CheckServedAccepted = "ServedAccepted"
	// CheckServedRouting: a request for a served hostname reaches the
	// route's backends, and only backends of routes the function reports
	// served for it (a passthrough connection likewise).
	CheckServedRouting = "ServedRouting"
	// CheckServedCertificate: a TLS client asking for a served hostname
	// gets the Secret the function meant for it (the certificateName of the
	// listener status.listeners names), and that certificate covers the
	// hostname unless the status says clients will see a name mismatch; a
	// passthrough hostname gets no certificate from the Gateway.
	CheckServedCertificate = "ServedCertificate"
	// CheckRefused: a claim the function refuses (Conflict, NotDelegated,
	// and every other state that is not served) never reaches the
	// claimant's backends on the port that serves the Gateway's tenants.
	CheckRefused = "Refused"
	// CheckRouteRefused: a route with nothing served (and not the owner's
	// on port 80) is refused by every parentRef.
	CheckRouteRefused = "RouteRefused"
	// CheckPort80: port 80 redirects to https every hostname but those of
	// the owner's routes that attach to the http listener (and the names
	// under an owner's wildcard), which it serves in plain HTTP: routes
	// only trusted callers may write (see "The owner on port 80" in
	// docs/design.md; TestAttackOwnerPort80 puts a tenant's through the
	// admission policies first).
	CheckPort80 = "Port80"
	// CheckRouteTable: no route table of the Gateway lists a domain in two
	// virtual hosts: Envoy rejects such a table whole ("Only unique values
	// for domains are permitted"), so nothing on its port is updated.
	CheckRouteTable = "RouteTable"
	// CheckHostnameless: a route without hostnames is served only on
	// listeners status.hostnamelessRoutes lists for it (those that admit
	// its namespace; its sectionName or kind may narrow them further).
	CheckHostnameless = "Hostnameless"
	// CheckFilterChains: no two filter chains of a port's listener match
	// the same server names: Envoy rejects such a listener whole
	// ("multiple filter chains with the same matching rules"), so no
	// listener of that port is updated any more (two TLSRoutes on one
	// passthrough hostname make two chains).
	CheckFilterChains = "FilterChains"
)

// A Verdict is what Judge found.
type Verdict struct {
	// Disagreements are the things the translator does otherwise than the
	// function says, sorted by check and subject.
	Disagreements []Disagreement
	// Judged counts, per check, the subjects it judged (listeners, claims,
	// routes, port-80 hostnames), so a test can tell a check that passed
	// from one that had nothing to judge. OverlappingTLSConfig counts the
	// listeners Envoy Gateway reports so: it serves them HTTP/1.1 only
	// (no HTTP/2 through ALPN, to prevent connection coalescing) unless a
	// ClientTrafficPolicy says otherwise.
	Judged map[string]int
}

// A Disagreement is one thing Envoy Gateway's translator does otherwise
// than the function's status and design say.
type Disagreement struct {
	// Check is one of the Check constants.
	Check string
	// Subject is what it is about: a listener, "<kind>/<namespace>/<name>
	// <hostname>" or a hostname.
	Subject string
	// Detail says what the translator made of it.
	Detail string
}

func (d Disagreement) Error() string { return d.Check + " " + d.Subject + ": " + d.Detail }

// Ports the judge reads.
const (
	portHTTP  = 80
	portHTTPS = 443
)

// probeLabel names a host under the apex that no scenario routes, asked
// for on port 80 to see the redirect's catch-all.
const probeLabel = "no-route-judge-probe"

// nameMismatch is how a Covered hostname's message says its wildcard
// certificate does not cover it (see Claims in docs/design.md).
const nameMismatch = "name mismatch"

// judging holds what Judge reads, indexed.
type judging struct {
	s      *Scenario
	r      *Result
	status tgwv1alpha1.TenantGatewayStatus
	edge   bool
	// routes maps "<kind>/<namespace>/<name>" to every route attached
	// to the judged Gateway, the composed redirect left out.
	routes map[string]route
	// served maps a lowercased hostname to the routes the status
	// reports served for it.
	served map[string][]string
	// listeners maps a listener name to its status entry.
	listeners map[string]tgwv1alpha1.ListenerStatus
	out       []Disagreement
	judged    map[string]int
}

// A route is what the judge needs of an HTTPRoute or TLSRoute.
type route struct {
	key        string
	kind       string
	namespace  string
	hostnames  []string
	parentRefs []gwapiv1.ParentReference
	backends   []string
}

// Judge compares what Envoy Gateway's translator made of a scenario with
// what the function says in the TenantGateway's status and what
// docs/design.md promises ("Who may attach", "Claims", "Conflicts",
// "Listeners"), and returns every disagreement. It returns an error only
// when it cannot judge (no TenantGateway in the render).
func Judge(s *Scenario, r *Result) (*Verdict, error) {
	if s.TenantGateway == nil {
		return nil, fmt.Errorf("cannot judge Gateway %s/%s: the render holds no TenantGateway status", s.Gateway.Namespace, s.Gateway.Name)
	}
	j := &judging{
		s: s, r: r, status: s.TenantGateway.Status,
		edge:      s.TenantGateway.Status.CertMode == tgwv1alpha1.CertModeEdge,
		routes:    map[string]route{},
		served:    map[string][]string{},
		listeners: map[string]tgwv1alpha1.ListenerStatus{},
		judged:    map[string]int{},
	}
	j.index()
	j.gateway()
	j.routeTables()
	j.filterChains()
	j.claims()
	j.routesRefused()
	j.port80()
	j.hostnameless()
	sort.SliceStable(j.out, func(a, b int) bool {
		if j.out[a].Check != j.out[b].Check {
			return j.out[a].Check < j.out[b].Check
		}
		return j.out[a].Subject < j.out[b].Subject
	})
	return &Verdict{Disagreements: j.out, Judged: j.judged}, nil
}

// overlappingTLS is the listener condition Envoy Gateway sets on HTTPS
// listeners of one port whose hostnames or certificates overlap.
const overlappingTLS = "OverlappingTLSConfig"

func (j *judging) add(check, subject, format string, args ...any) {
	j.out = append(j.out, Disagreement{Check: check, Subject: subject, Detail: fmt.Sprintf(format, args...)})
}

// redirectName is the composed http→https redirect route (see Names in
// docs/design.md): it is the function's, not a tenant's.
func (j *judging) redirectName() string { return j.s.TenantGateway.Name + "-http-redirect" }

func (j *judging) index() {
	gw := j.s.Gateway
	for _, h := range j.s.HTTPRoutes {
		// The function's own routes: the redirect, and the zone guards it
		// writes into child namespaces (they claim nothing; what they do
		// to the route tables is judged with the tables).
		if h.Namespace == gw.Namespace && h.Name == j.redirectName() || h.Namespace != gw.Namespace && h.Name == gateway.ZoneGuardName(gw.Name) {
			continue
		}
		j.addRoute(kindHTTPRoute, h.Namespace, h.Name, h.Spec.Hostnames, h.Spec.ParentRefs, httpBackends(h))
	}
	for _, t := range j.s.TLSRoutes {
		j.addRoute(kindTLSRoute, t.Namespace, t.Name, t.Spec.Hostnames, t.Spec.ParentRefs, tlsBackends(t))
	}
	for _, c := range j.status.Hostnames {
		if servedState(c.State) {
			h := strings.ToLower(c.Hostname)
			j.served[h] = append(j.served[h], c.Route)
		}
	}
	for _, l := range j.status.Listeners {
		j.listeners[l.Name] = l
	}
}

func (j *judging) addRoute(kind, ns, name string, hostnames []gwapiv1.Hostname, refs []gwapiv1.ParentReference, backends []string) {
	rt := route{key: kind + "/" + ns + "/" + name, kind: kind, namespace: ns, backends: backends}
	for _, p := range refs {
		if j.refersToGateway(ns, p) {
			rt.parentRefs = append(rt.parentRefs, p)
		}
	}
	if len(rt.parentRefs) == 0 {
		return
	}
	for _, h := range hostnames {
		rt.hostnames = append(rt.hostnames, strings.ToLower(string(h)))
	}
	j.routes[rt.key] = rt
}

// refersToGateway says whether a parentRef of a route in namespace ns is
// the judged Gateway.
func (j *judging) refersToGateway(ns string, p gwapiv1.ParentReference) bool {
	if p.Group != nil && *p.Group != groupGateway || p.Kind != nil && *p.Kind != kindGateway {
		return false
	}
	if p.Namespace != nil {
		ns = string(*p.Namespace)
	}
	return string(p.Name) == j.s.Gateway.Name && ns == j.s.Gateway.Namespace
}

func servedState(s tgwv1alpha1.HostnameState) bool {
	return s == tgwv1alpha1.HostnameListening || s == tgwv1alpha1.HostnameCovered || s == tgwv1alpha1.HostnamePassthrough
}

// servingPort is where the Gateway serves its tenants' HTTP: 443, or 80
// on an edge Gateway, where TLS ends in front of it (see Listeners in
// docs/design.md).
func (j *judging) servingPort() int32 {
	if j.edge {
		return portHTTP
	}
	return portHTTPS
}

// gateway: the Gateway Accepted, every listener healthy.
func (j *judging) gateway() {
	want := Condition{Type: typeAccepted, Status: metav1.ConditionTrue, Reason: reasonAccepted}
	j.judged[CheckGatewayAccepted]++
	if got := j.r.GatewayAccepted(); got != want {
		j.add(CheckGatewayAccepted, j.s.Gateway.Namespace+"/"+j.s.Gateway.Name, "%+v", got)
	}
	ls := j.r.Listeners()
	for _, l := range j.s.Gateway.Spec.Listeners {
		j.judged[CheckListenerHealthy]++
		st, ok := ls[string(l.Name)]
		if !ok {
			j.add(CheckListenerHealthy, string(l.Name), "the translator reports no status for it")
			continue
		}
		var bad []string
		for _, typ := range []string{typeAccepted, "Programmed", "ResolvedRefs"} {
			if !slices.ContainsFunc(st.Conditions, func(c Condition) bool { return c.Type == typ && c.Status == metav1.ConditionTrue }) {
				bad = append(bad, typ+" is not True")
			}
		}
		if slices.ContainsFunc(st.Conditions, func(c Condition) bool { return c.Type == "Conflicted" && c.Status == metav1.ConditionTrue }) {
			bad = append(bad, "Conflicted")
		}
		if hasTrueCondition(st.Conditions, overlappingTLS) {
			j.judged[overlappingTLS]++
		}
		if len(bad) > 0 {
			j.add(CheckListenerHealthy, string(l.Name), "%s: %+v", strings.Join(bad, ", "), st.Conditions)
		}
	}
}

// routeTables: every route table of the Gateway lists each domain in one
// virtual host only.
func (j *judging) routeTables() {
	for _, rc := range j.r.XDS.RouteConfigs {
		if j.listenerOf(rc.Name) == "" {
			continue // Envoy Gateway's own readiness table.
		}
		j.judged[CheckRouteTable]++
		first := map[string]string{}
		for _, vh := range rc.VirtualHosts {
			for _, d := range vh.Domains {
				d = strings.ToLower(d)
				if other, dup := first[d]; dup {
					j.add(CheckRouteTable, rc.Name, "virtual hosts %s and %s both list domain %s: Envoy rejects the whole table", other, vh.Name, d)
					continue
				}
				first[d] = vh.Name
			}
		}
	}
}

// filterChains judges every listener with filter chains chosen by SNI: no
// two of its chains may match the same server names.
func (j *judging) filterChains() {
	for _, l := range j.r.XDS.Listeners {
		first := map[string]string{}
		for _, fc := range l.FilterChains {
			if fc.Default || len(fc.ServerNames) == 0 {
				continue
			}
			names := slices.Clone(fc.ServerNames)
			slices.Sort(names)
			key := strings.ToLower(strings.Join(names, ","))
			if len(first) == 0 {
				j.judged[CheckFilterChains]++
			}
			if other, dup := first[key]; dup {
				j.add(CheckFilterChains, l.Name, "filter chains %s and %s both match server names %s: Envoy rejects the whole listener", other, fc.Name, key)
				continue
			}
			first[key] = fc.Name
		}
	}
}

// claims judges every hostname claim of status.hostnames.
func (j *judging) claims() {
	for _, c := range j.status.Hostnames {
		rt, ok := j.routes[c.Route]
		subject := c.Route + " " + c.Hostname
		if !ok {
			if servedState(c.State) {
				j.add(CheckServedAccepted, subject, "status says %s, but the scenario has no such route attached to the Gateway", c.State)
			}
			continue
		}
		h := strings.ToLower(c.Hostname)
		if !servedState(c.State) {
			j.refused(subject, rt, h)
			continue
		}
		j.acceptedFor(subject, rt, h)
		if rt.kind == kindTLSRoute {
			j.passthrough(subject, rt, h)
			continue
		}
		j.routing(subject, rt, h)
		if !j.edge {
			j.certificate(subject, c, h)
		}
	}
}

// acceptedFor: some parentRef of the route is Accepted and reaches a
// listener whose hostname matches h (a parentRef naming no listener may
// reach any; the xDS checks say which one serves h).
func (j *judging) acceptedFor(subject string, rt route, h string) {
	j.judged[CheckServedAccepted]++
	parents, err := j.r.RouteParents(rt.kind, rt.namespace, routeName(rt.key))
	if err != nil {
		j.add(CheckServedAccepted, subject, "%v", err)
		return
	}
	for _, p := range rt.parentRefs {
		section := ""
		if p.SectionName != nil {
			section = string(*p.SectionName)
		}
		if !hasTrueCondition(parents[section], typeAccepted) {
			continue
		}
		if section == "" {
			return
		}
		if l, ok := j.specListener(section); ok && hostnameMatches(l.Hostname, h) {
			return
		}
	}
	j.add(CheckServedAccepted, subject, "status says it is served, but no parentRef is accepted on a listener for it; the translator says %v", parents)
}

func hasTrueCondition(cs []Condition, typ string) bool {
	return slices.ContainsFunc(cs, func(c Condition) bool { return c.Type == typ && c.Status == metav1.ConditionTrue })
}

func routeName(key string) string { return key[strings.LastIndex(key, "/")+1:] }

func (j *judging) specListener(name string) (gwapiv1.Listener, bool) {
	for _, l := range j.s.Gateway.Spec.Listeners {
		if string(l.Name) == name {
			return l, true
		}
	}
	return gwapiv1.Listener{}, false
}

// hostnameMatches says whether a listener hostname (nil: any) and a route
// hostname intersect, the way Gateway API matches them: exactly, or a
// wildcard on either side standing for one or more labels.
func hostnameMatches(listener *gwapiv1.Hostname, h string) bool {
	if listener == nil {
		return true
	}
	lh := strings.ToLower(string(*listener))
	switch {
	case lh == h:
		return true
	case strings.HasPrefix(lh, "*.") && strings.HasSuffix(h, lh[1:]) && len(h) > len(lh)-1:
		return true
	case strings.HasPrefix(h, "*.") && strings.HasSuffix(lh, h[1:]) && len(lh) > len(h)-1:
		return true
	}
	return false
}

// routing: a request for h on the serving port reaches the route's
// backends and only backends of routes served for h.
func (j *judging) routing(subject string, rt route, h string) {
	j.judged[CheckServedRouting]++
	port := j.servingPort()
	vh, got, err := j.virtualHostBackends(port, h)
	if err != nil {
		j.add(CheckServedRouting, subject, "status says it is served, but %v", err)
		return
	}
	if missing := sets.New(rt.backends...).Difference(sets.New(got...)); missing.Len() > 0 {
		j.add(CheckServedRouting, subject, "port %d, virtual host %s does not route to its backends %v; it routes to %v", port, vh.Name, sets.List(missing), got)
	}
	allowed := j.allowedBackends(vh)
	if extra := sets.New(got...).Difference(allowed); extra.Len() > 0 {
		j.add(CheckServedRouting, subject, "port %d, virtual host %s also routes to %v, backends of no route served for %s", port, vh.Name, sets.List(extra), h)
	}
}

// virtualHostBackends is the virtual host a request for host on a port
// gets and every Service any of its routes forwards to.
func (j *judging) virtualHostBackends(port int32, host string) (*VirtualHost, []string, error) {
	sv, err := j.r.XDS.Serve(port, host)
	if err != nil {
		return nil, nil, err
	}
	if sv.VirtualHost == nil {
		return nil, nil, fmt.Errorf("port %d, filter chain %s has no virtual host for %s (404)", port, sv.FilterChain.Name, host)
	}
	var clusters []string
	for _, rt := range sv.VirtualHost.Routes {
		clusters = append(clusters, rt.Clusters...)
	}
	return sv.VirtualHost, j.r.backendsOf(clusters), nil
}

// allowedBackends are the backends of the routes the status reports
// served for a virtual host's domains, and of the hostname-less routes it
// reports on the virtual host's listener.
func (j *judging) allowedBackends(vh *VirtualHost) sets.Set[string] {
	out := sets.New[string]()
	for _, d := range vh.Domains {
		for _, key := range j.served[strings.ToLower(d)] {
			out.Insert(j.routes[key].backends...)
		}
	}
	listener := j.listenerOf(vh.Name)
	for _, hr := range j.status.HostnamelessRoutes {
		if slices.Contains(hr.Listeners, listener) {
			out.Insert(j.routes[hr.Route].backends...)
		}
	}
	return out
}

// listenerOf reads the Gateway listener out of an Envoy Gateway filter
// chain, route table or virtual host name: "<namespace>/<gateway>/<listener>[/...]".
func (j *judging) listenerOf(xdsName string) string {
	rest, ok := strings.CutPrefix(xdsName, j.s.Gateway.Namespace+"/"+j.s.Gateway.Name+"/")
	if !ok {
		return ""
	}
	l, _, _ := strings.Cut(rest, "/")
	return l
}

// certificate: the TLS client asking for h gets the certificateName of
// the listener the status names for h, and its SANs cover h unless the
// status warns of a name mismatch.
func (j *judging) certificate(subject string, c tgwv1alpha1.HostnameStatus, h string) {
	j.judged[CheckServedCertificate]++
	p, err := j.r.Presents(portHTTPS, h)
	if err != nil {
		j.add(CheckServedCertificate, subject, "%v", err)
		return
	}
	listener := j.listenerOf(p.FilterChain)
	ls, ok := j.listeners[listener]
	if !ok {
		j.add(CheckServedCertificate, subject, "Envoy picks filter chain %s, of no listener status.listeners lists", p.FilterChain)
		return
	}
	if l := j.statusListener(portHTTPS, h); l != "" && l != listener {
		j.add(CheckServedCertificate, subject, "status says listener %s serves it, but Envoy picks filter chain %s", l, p.FilterChain)
	}
	want := j.s.Gateway.Namespace + "/" + ls.CertificateName
	if p.Secret != want {
		j.add(CheckServedCertificate, subject, "Envoy presents Secret %q, but status.listeners says listener %s serves %q", p.Secret, listener, want)
	}
	if !j.issued(ls.CertificateName) {
		j.add(CheckServedCertificate, subject, "no composed Certificate writes Secret %s", ls.CertificateName)
	}
	covered := slices.ContainsFunc(p.DNSNames, func(san string) bool { return Covers(san, h) })
	if !covered && !strings.Contains(c.Message, nameMismatch) {
		j.add(CheckServedCertificate, subject, "the certificate presented (%s, SANs %v) does not cover it, and status does not warn of a name mismatch", p.Secret, p.DNSNames)
	}
	if covered && strings.Contains(c.Message, nameMismatch) {
		j.add(CheckServedCertificate, subject, "status warns of a name mismatch, but the certificate presented (%s, SANs %v) covers it", p.Secret, p.DNSNames)
	}
}

// statusListener is the listener status.listeners says takes h on port:
// the one of hostname h, else the one whose wildcard (one or more labels)
// matches h with the longest suffix, as the Gateway API picks among
// listeners; "" when none
// does. Read from the structured listener status, not from messages.
func (j *judging) statusListener(port int32, h string) string {
	best, bestLen := "", -1
	for _, l := range j.status.Listeners {
		if l.Port != port || l.Hostname == "" {
			continue
		}
		if l.Hostname == h {
			return l.Name
		}
		if strings.HasPrefix(l.Hostname, "*.") && strings.HasSuffix(h, l.Hostname[1:]) && len(l.Hostname) > bestLen {
			best, bestLen = l.Name, len(l.Hostname)
		}
	}
	return best
}

// issued says whether the Secret is what the function means it to be: the
// operator's (existingSecret) or written by a composed Certificate.
func (j *judging) issued(secret string) bool {
	if j.status.CertMode == tgwv1alpha1.CertModeExistingSecret {
		ref := j.s.TenantGateway.Spec.WildcardSecretRef
		return ref != nil && ref.Name == secret
	}
	return slices.ContainsFunc(j.s.Certificates, func(c cmv1.Certificate) bool {
		return c.Namespace == j.s.Gateway.Namespace && c.Spec.SecretName == secret
	})
}

// passthrough: a TLS client asking for h gets no certificate from the
// Gateway and reaches the TLSRoute's backends, and only backends of
// routes served for h.
func (j *judging) passthrough(subject string, rt route, h string) {
	j.judged[CheckServedRouting]++
	j.judged[CheckServedCertificate]++
	sv, err := j.r.XDS.Serve(portHTTPS, h)
	if err != nil {
		j.add(CheckServedRouting, subject, "%v", err)
		return
	}
	p := j.r.presented(sv.FilterChain)
	if p.Secret != "" || sv.FilterChain.RouteConfig != "" {
		j.add(CheckServedCertificate, subject, "a passthrough hostname, but filter chain %s terminates TLS (Secret %q)", p.FilterChain, p.Secret)
	}
	allowed := sets.New[string]()
	for _, key := range j.served[h] {
		allowed.Insert(j.routes[key].backends...)
	}
	got := sets.New(p.Backends...)
	if missing := sets.New(rt.backends...).Difference(got); missing.Len() > 0 {
		j.add(CheckServedRouting, subject, "filter chain %s does not forward to %v; it forwards to %v", p.FilterChain, sets.List(missing), p.Backends)
	}
	if extra := got.Difference(allowed); extra.Len() > 0 {
		j.add(CheckServedRouting, subject, "filter chain %s also forwards to %v, backends of no route served for %s", p.FilterChain, sets.List(extra), h)
	}
}

// refused: a claim the function does not serve reaches none of the
// claimant's backends on the serving port (port 80 of a Gateway with an
// http listener is judged by port80): not through the filter chain a TLS
// client asking for h gets, nor through any other chain of the port with
// Host: h (a client reusing a connection made for another name, as HTTP/2
// coalescing does, or one sending another SNI on purpose).
func (j *judging) refused(subject string, rt route, h string) {
	j.judged[CheckRefused]++
	allowed := sets.New[string]()
	for _, key := range j.served[h] {
		allowed.Insert(j.routes[key].backends...)
	}
	forbidden := sets.New(rt.backends...).Difference(allowed)
	if rt.kind == kindTLSRoute {
		if p, err := j.r.Presents(portHTTPS, h); err == nil {
			if leak := forbidden.Intersection(sets.New(p.Backends...)); leak.Len() > 0 {
				j.add(CheckRefused, subject, "status says it is refused, but filter chain %s forwards to its backends %v", p.FilterChain, sets.List(leak))
			}
		}
		return
	}
	port := j.servingPort()
	l, ok := j.r.XDS.Listener(port)
	if !ok {
		return
	}
	for _, fc := range l.FilterChains {
		rc, ok := j.r.XDS.RouteConfig(fc.RouteConfig)
		if !ok {
			continue
		}
		vh := pickVirtualHost(rc.VirtualHosts, h)
		if vh == nil {
			continue
		}
		var clusters []string
		for _, r := range vh.Routes {
			clusters = append(clusters, r.Clusters...)
		}
		if leak := forbidden.Intersection(sets.New(j.r.backendsOf(clusters)...)); leak.Len() > 0 {
			j.add(CheckRefused, subject, "status says it is refused, but on port %d, filter chain %s, virtual host %s routes Host: %s to its backends %v", port, fc.Name, vh.Name, h, sets.List(leak))
		}
	}
}

// owner80 says whether a route attaches to the http listener by the
// owner's right: in the Gateway's namespace, with a parentRef naming no
// listener or the http listener (see "The owner on port 80" in
// docs/design.md).
func (j *judging) owner80(rt route) bool {
	if j.edge || rt.kind != kindHTTPRoute || rt.namespace != j.s.Gateway.Namespace {
		return false
	}
	if _, ok := j.specListener("http"); !ok {
		return false
	}
	return slices.ContainsFunc(rt.parentRefs, func(p gwapiv1.ParentReference) bool {
		return (p.SectionName == nil || *p.SectionName == "http") && (p.Port == nil || *p.Port == portHTTP)
	})
}

// routesRefused: a route with nothing to be served (no served claim, no
// listener for it as a hostname-less route, not the owner's on port 80)
// is accepted by no parentRef: NotAllowedByListeners, or another reason
// the Gateway refuses it for.
func (j *judging) routesRefused() {
	hostnameless := map[string]int{}
	for _, hr := range j.status.HostnamelessRoutes {
		hostnameless[hr.Route] = len(hr.Listeners)
	}
	served := sets.New[string]()
	for _, c := range j.status.Hostnames {
		if servedState(c.State) {
			served.Insert(c.Route)
		}
	}
	for _, key := range sortedKeys(j.routes) {
		rt := j.routes[key]
		if served.Has(key) || hostnameless[key] > 0 || j.owner80(rt) {
			continue
		}
		j.judged[CheckRouteRefused]++
		parents, err := j.r.RouteParents(rt.kind, rt.namespace, routeName(key))
		if err != nil {
			j.add(CheckRouteRefused, key, "%v", err)
			continue
		}
		for _, section := range sortedKeys(parents) {
			if hasTrueCondition(parents[section], typeAccepted) {
				j.add(CheckRouteRefused, key, "nothing of it is served, but the Gateway accepts it (section %q): %+v", section, parents[section])
			}
		}
	}
}

// port80 judges the http listener of a Gateway that has one: the owner's
// routes attached to it are served there, in plain HTTP, on their
// hostnames, whatever state the status gives those ("The owner on port
// 80" in docs/design.md), and an owner's wildcard hostname on every name
// under it; every other hostname a route or the status names, and a name
// nobody routes, is redirected to https with a 301.
func (j *judging) port80() {
	if _, ok := j.specListener("http"); !ok || j.edge {
		return
	}
	want, catchAll := j.ownerRoutesOn80()
	for _, h := range sets.List(j.port80Hosts()) {
		j.judged[CheckPort80]++
		w, owner := ownerAnswers(want, h)
		if !owner {
			if err := j.r.RedirectsToHTTPS(h); err != nil && !j.caughtByOwner(h, catchAll) {
				j.add(CheckPort80, h, "no owner's route on the http listener names it, so port 80 should redirect it to https: %v", err)
			}
			continue
		}
		_, b, err := j.virtualHostBackends(portHTTP, h)
		if err != nil {
			j.add(CheckPort80, h, "an owner's route on the http listener names it, but %v", err)
			continue
		}
		if !sets.New(b...).Equal(w) {
			j.add(CheckPort80, h, "port 80 routes to %v, but the owner's routes naming it have backends %v", b, sets.List(w))
		}
	}
}

// ownerRoutesOn80 maps each hostname of the owner's routes on the http
// listener to their backends; catchAll are the backends of those without
// hostnames, which share the catch-all with the redirect (Gateway API's
// precedence, oldest first, picks one).
func (j *judging) ownerRoutesOn80() (byHost map[string]sets.Set[string], catchAll sets.Set[string]) {
	byHost, catchAll = map[string]sets.Set[string]{}, sets.New[string]()
	for _, key := range sortedKeys(j.routes) {
		rt := j.routes[key]
		if !j.owner80(rt) {
			continue
		}
		if len(rt.hostnames) == 0 {
			catchAll.Insert(rt.backends...)
		}
		for _, h := range rt.hostnames {
			if byHost[h] == nil {
				byHost[h] = sets.New[string]()
			}
			byHost[h].Insert(rt.backends...)
		}
	}
	return byHost, catchAll
}

// port80Hosts are the hosts port80 asks for: every hostname a route or
// the status names, every domain port 80 has a virtual host for, and a
// name nobody routes (the redirect's catch-all answers it).
func (j *judging) port80Hosts() sets.Set[string] {
	hosts := sets.KeySet(j.r.DomainBackends(portHTTP))
	for _, rt := range j.routes {
		hosts.Insert(rt.hostnames...)
	}
	for _, c := range j.status.Hostnames {
		hosts.Insert(strings.ToLower(c.Hostname))
	}
	hosts.Insert(probeLabel + "." + strings.ToLower(j.s.TenantGateway.Spec.Apex))
	return hosts
}

// caughtByOwner says whether http://h/ reaches only backends of the
// owner's hostname-less routes on the http listener (catchAll).
func (j *judging) caughtByOwner(h string, catchAll sets.Set[string]) bool {
	b, err := j.r.Backends(portHTTP, h)
	return err == nil && len(b) > 0 && catchAll.IsSuperset(sets.New(b...))
}

// ownerAnswers finds the owner's routes that answer h on port 80: those
// naming it, else those naming the most specific wildcard above it (an
// owner's *.<apex> answers every name under the apex, as Gateway API
// matches hostnames and Envoy picks virtual hosts).
func ownerAnswers(byHost map[string]sets.Set[string], h string) (sets.Set[string], bool) {
	if b, ok := byHost[h]; ok {
		return b, true
	}
	for rest := strings.TrimPrefix(h, "*."); strings.Contains(rest, "."); {
		_, rest, _ = strings.Cut(rest, ".")
		if b, ok := byHost["*."+rest]; ok {
			return b, true
		}
	}
	return nil, false
}

// hostnameless: every route without hostnames is served only on listeners
// the status lists for it (none when it is not listed). The status lists
// the listeners that admit the route's namespace, so a route may reach
// fewer (its sectionName, its kind), never more.
func (j *judging) hostnameless() {
	listed := map[string][]string{}
	for _, hr := range j.status.HostnamelessRoutes {
		listed[hr.Route] = hr.Listeners
	}
	for _, key := range sortedKeys(j.routes) {
		rt := j.routes[key]
		if len(rt.hostnames) > 0 {
			continue
		}
		j.judged[CheckHostnameless]++
		want := sets.New(listed[key]...)
		got := j.listenersServing(rt)
		if extra := got.Difference(want); extra.Len() > 0 {
			j.add(CheckHostnameless, key, "served on listeners %v, which status.hostnamelessRoutes does not list (it lists %v)", sets.List(extra), sets.List(want))
		}
	}
}

// listenersServing is every Gateway listener whose route tables hold a
// route of rt (Envoy Gateway names routes "<kind>/<namespace>/<name>/...").
func (j *judging) listenersServing(rt route) sets.Set[string] {
	prefix := strings.ToLower(rt.kind) + "/" + rt.namespace + "/" + routeName(rt.key) + "/"
	out := sets.New[string]()
	for _, rc := range j.r.XDS.RouteConfigs {
		for _, vh := range rc.VirtualHosts {
			if slices.ContainsFunc(vh.Routes, func(r Route) bool { return strings.HasPrefix(r.Name, prefix) }) {
				out.Insert(j.listenerOf(vh.Name))
			}
		}
	}
	return out
}

// httpBackends are the Services an HTTPRoute's rules send to,
// "<namespace>/<name>:<port>" as Result.Backends names them.
func httpBackends(r gwapiv1.HTTPRoute) []string {
	var out []string
	for _, rule := range r.Spec.Rules {
		for _, b := range rule.BackendRefs {
			out = append(out, serviceKey(r.Namespace, b.BackendObjectReference)...)
		}
	}
	return out
}

// tlsBackends are the Services a TLSRoute's rules send to.
func tlsBackends(r gwapiv1.TLSRoute) []string {
	var out []string
	for _, rule := range r.Spec.Rules {
		for _, b := range rule.BackendRefs {
			out = append(out, serviceKey(r.Namespace, b.BackendObjectReference)...)
		}
	}
	return out
}

func serviceKey(routeNS string, ref gwapiv1.BackendObjectReference) []string {
	if !isCore(ref.Group, ref.Kind, kindService) || ref.Port == nil {
		return nil
	}
	ns := routeNS
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	return []string{fmt.Sprintf("%s/%s:%d", ns, ref.Name, *ref.Port)}
}
