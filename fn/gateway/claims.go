package gateway

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// A claim is one hostname one route asks for, with its judgement.
type claim struct {
	route     string // <kind>/<namespace>/<name>
	kind      string
	namespace string
	name      string
	hostname  string
	state     v1alpha1.HostnameState
	message   string
	// recording: Waiting only until the order ledger's record is written,
	// which a route report does not count as unserved.
	recording bool
	// refs are the route's parentRefs that target this Gateway.
	refs []ParentRef
	// listener is the listener that takes the hostname, once planned.
	listener string
	// passthrough is the TLS passthrough listener of <svc>.<apex>, if the
	// hostname is one.
	passthrough string
	// specificity is the number of labels of the claimant's delegation:
	// the most specific delegation wins a contested hostname.
	specificity int
	// reach is the child zone a NotDelegated wildcard reaches into: its
	// route still attaches to the claimant's own wildcard listener, so the
	// name is kept off that listener like a lost one (see Conflicts in
	// docs/design.md).
	reach *child
	// duplicate marks a passthrough claim that shares its listener with
	// another route of its namespace (see passthroughHolder).
	duplicate bool
}

// collectClaims turns every hostname of every attached route from an
// admitted namespace into a claim, sorted by hostname then route, and
// returns the attached routes without hostnames (which claim nothing, and
// attach to every listener that admits their namespace) in ID order. The
// function's own redirect route is not a tenant's route.
func collectClaims(in *Input, t *tenancy) ([]*claim, []*Route) {
	var out []*claim
	var hostless []*Route
	for i := range in.Routes {
		r := &in.Routes[i]
		if !t.admitted(r.Namespace) {
			continue
		}
		refs := parentRefsTo(in, r)
		if len(refs) == 0 || challenge(in, r, refs) || isZoneGuard(in, t, r) {
			continue
		}
		if len(r.Hostnames) == 0 {
			if r.Kind != KindHTTPRoute || r.Namespace != in.Namespace || r.Name != RedirectName(in.Name) {
				hostless = append(hostless, r)
			}
			continue
		}
		id := r.ID()
		for i, h := range r.Hostnames {
			// A route holds at most 16 hostnames: a scan beats a map.
			if slices.Contains(r.Hostnames[:i], h) {
				continue
			}
			out = append(out, &claim{route: id, kind: r.Kind, namespace: r.Namespace, name: r.Name, hostname: h, refs: refs})
		}
	}
	sort.Slice(out, func(i, j int) bool { return claimLess(out[i], out[j]) })
	sort.Slice(hostless, func(i, j int) bool { return hostless[i].ID() < hostless[j].ID() })
	return out, hostless
}

// claimLess is the order of claims everywhere: by hostname, then route.
func claimLess(a, b *claim) bool {
	if a.hostname != b.hostname {
		return a.hostname < b.hostname
	}
	return a.route < b.route
}

// judgeShape settles the claims that can be judged from the hostname and
// the claimant alone: Invalid, OutsideApex, NotDelegated, and NoMatchingParent
// (a route kind no listener for the hostname serves, or parentRefs that
// select none that may take it). The rest stay unjudged.
func judgeShape(in *Input, t *tenancy, claims []*claim, children []*child) {
	zones := map[string]*child{}
	for _, c := range children {
		if c.state != v1alpha1.ChildApexOutsideApex {
			zones[c.apex] = c
		}
	}
	passthrough := map[string]string{}
	if in.Spec.CertMode != v1alpha1.CertModeEdge {
		for _, s := range in.Spec.TLSPassthroughServices {
			passthrough[string(s)+"."+in.Spec.Apex] = PassthroughListenerName(string(s))
		}
	}
	for _, c := range claims {
		h := c.hostname
		if msg := invalidHostname(in, h); msg != "" {
			c.state, c.message = v1alpha1.HostnameInvalid, msg
			continue
		}
		if !under(h, in.Spec.Apex) {
			c.state, c.message = v1alpha1.HostnameOutsideApex, fmt.Sprintf("%s is neither %s nor a subdomain of it; a listener for it would make the admission policy refuse the whole Gateway", h, in.Spec.Apex)
			continue
		}
		if msg, z := notDelegated(t, c, zones, passthrough); msg != "" {
			c.state, c.message, c.reach = v1alpha1.HostnameNotDelegated, msg, z
			continue
		}
		d, _ := t.delegation(c.namespace)
		c.specificity = strings.Count(d, ".") + 1
		c.passthrough = passthrough[h]
		if msg := noParent(in, c); msg != "" {
			c.state, c.message = v1alpha1.HostnameNoMatchingParent, msg
		} else if msg := unselected(in, c); msg != "" {
			c.state, c.message = v1alpha1.HostnameNoMatchingParent, msg
		}
	}
}

// notDelegated says why the claimant may not have the hostname, or "". A
// namespace may claim only under its host label (the TenantGateway's own
// and attached namespaces, under the apex when they have none); a wildcard
// may not reach into the zone of a child apex more specific than the
// claimant's delegation (it would take the child's names under it, and
// *.<child> is the child's own listener); passthrough hostnames belong to
// the TenantGateway's own and attached namespaces.
func notDelegated(t *tenancy, c *claim, zones map[string]*child, passthrough map[string]string) (string, *child) {
	h, ns := c.hostname, c.namespace
	d, ok := t.delegation(ns)
	switch {
	case !ok:
		return fmt.Sprintf("namespace %s has no %s label and is neither the TenantGateway's namespace nor one of its attachedNamespaces, so it was delegated no hostname", ns, kube.LabelNamespaceHost), nil
	case !under(h, d):
		return fmt.Sprintf("%s is outside what namespace %s was delegated: %s and its subdomains (its %s label)", h, ns, d, kube.LabelNamespaceHost), nil
	}
	if isWildcard(h) {
		var z *child
		eachDomain(base(h), func(a string) bool {
			z = zones[a]
			return z != nil && len(a) > len(d)
		})
		if z != nil && len(z.apex) > len(d) {
			return fmt.Sprintf("%s reaches into the zone of child tenant apex %s (namespace %s); only namespaces delegated %s may claim wildcards there", h, z.apex, z.namespace, z.apex), z
		}
	}
	if l := passthrough[h]; l != "" && !t.publisher[ns] {
		return fmt.Sprintf("%s is the TLS passthrough listener %s, delegated only to the TenantGateway's namespace and its attachedNamespaces", h, l), nil
	}
	return "", nil
}

// noParent says why no listener of this Gateway can take the claim's kind of
// route for its hostname, or "" (see Claims in docs/design.md): a TLSRoute
// attaches only to a TLS passthrough listener (an edge Gateway has none),
// and an HTTPRoute cannot be served on a passthrough hostname, whose TLS
// listener takes the connection.
func noParent(in *Input, c *claim) string {
	switch {
	case c.kind == KindTLSRoute && in.Spec.CertMode == v1alpha1.CertModeEdge:
		return "an edge Gateway has only plain-HTTP listeners on port 80, which a TLSRoute cannot attach to: this route matches no listener (NoMatchingParent)"
	case c.kind == KindTLSRoute && c.passthrough == "":
		return fmt.Sprintf("a TLSRoute attaches only to a TLS passthrough listener (tls-<service> for <service>.%s), and this Gateway has none for %s: this route matches no listener (NoMatchingParent)", in.Spec.Apex, c.hostname)
	case c.kind != KindTLSRoute && c.passthrough != "":
		return fmt.Sprintf("%s is taken by TLS passthrough listener %s, which serves TLSRoutes only: this route matches no listener for it (NoMatchingParent)", c.hostname, c.passthrough)
	}
	return ""
}

// invalidHostname says why h can never be served in this mode, or "".
func invalidHostname(in *Input, h string) string {
	switch {
	case !validHostname(h):
		return fmt.Sprintf("%q is not a valid Gateway API hostname (lowercase DNS name, optionally starting with \"*.\")", h)
	case isWildcard(h) && in.Spec.CertMode == v1alpha1.CertModeHTTP01:
		return "HTTP-01 cannot issue wildcard certificates; use certMode dns01 or existingSecret for wildcard hostnames"
	case in.Spec.CertMode == v1alpha1.CertModeHTTP01:
		return longLabel(h)
	}
	return ""
}

// longLabel says why a hostname with a DNS label over 63 characters gets no
// certificate, or "". The Gateway API admits such a hostname (its schema
// bounds only the whole name), but no DNS name has such a label and no ACME
// CA issues for one: an http01 Certificate for it would only spend an order
// and never be ready.
func longLabel(h string) string {
	for l := range strings.SplitSeq(base(h), ".") {
		if len(l) > validation.DNS1123LabelMaxLength {
			return fmt.Sprintf("its DNS label %.20s… is %d characters, over DNS's limit of %d: no ACME CA issues a certificate for it; use a shorter label", l, len(l), validation.DNS1123LabelMaxLength)
		}
	}
	return ""
}

// unjudged are the claims still waiting for a listener decision.
func unjudged(claims []*claim) []*claim {
	var out []*claim
	for _, c := range claims {
		if c.state == "" {
			out = append(out, c)
		}
	}
	return out
}

// An owner is the namespace a hostname was given to, once delegation and
// conflicts are settled.
type owner struct {
	hostname  string
	namespace string
	// losers are the namespaces that lost the hostname, if contested.
	losers []string
}

// ownersOf lists every hostname still waiting for a listener (passthrough
// hostnames aside) with its owner, in byte order. Claims are sorted by
// hostname, and every unjudged claim of a hostname is of its winner's
// namespace, so one pass does it.
func ownersOf(claims []*claim, contests []*contest) []owner {
	losers := make(map[string][]string, len(contests))
	for _, ct := range contests {
		losers[ct.hostname] = ct.loserNamespaces
	}
	var out []owner
	for _, c := range claims {
		if c.state != "" || c.passthrough != "" {
			continue
		}
		if n := len(out); n == 0 || out[n-1].hostname != c.hostname {
			out = append(out, owner{hostname: c.hostname, namespace: c.namespace, losers: losers[c.hostname]})
		}
	}
	return out
}

// reaches are the wildcards that reach into a child's zone from a namespace
// not delegated it, as owners whose losers are the claimants: a route
// attaches to every listener whose hostname intersects its own, so the
// claimant's own wider listener would serve the name (and, in a shared
// route table, list it beside the child's). isolate keeps the claimants off
// those listeners unless a listener of exactly that name takes it (see
// Conflicts in docs/design.md). A pin would not do: admitting the child, it
// would list the child's own names under it twice in a shared table.
func reaches(claims []*claim) []owner {
	var out []owner
	for _, c := range claims {
		if c.reach == nil {
			continue
		}
		if n := len(out); n > 0 && out[n-1].hostname == c.hostname {
			if !slices.Contains(out[n-1].losers, c.namespace) {
				out[n-1].losers = append(out[n-1].losers, c.namespace)
				slices.Sort(out[n-1].losers)
			}
			continue
		}
		out = append(out, owner{hostname: c.hostname, namespace: c.reach.namespace, losers: []string{c.namespace}})
	}
	return out
}
