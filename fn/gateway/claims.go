package gateway

import (
	"fmt"
	"sort"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
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
	// noParent marks a TLSRoute an edge Gateway has no listener for.
	noParent bool
}

// collectClaims turns every hostname of every attached route from an
// admitted namespace into a claim, sorted by hostname then route.
func collectClaims(in *Input) []*claim {
	admitted := admittedNamespaces(in)
	var out []*claim
	for i := range in.Routes {
		r := &in.Routes[i]
		if !admitted[r.Namespace] || !attaches(in, r) {
			continue
		}
		seen := map[string]bool{}
		for _, h := range r.Hostnames {
			if seen[h] {
				continue
			}
			seen[h] = true
			out = append(out, &claim{route: r.ID(), kind: r.Kind, namespace: r.Namespace, name: r.Name, hostname: h})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].hostname != out[j].hostname {
			return out[i].hostname < out[j].hostname
		}
		return out[i].route < out[j].route
	})
	return out
}

// judgeShape settles the claims that can be judged from the hostname alone:
// Invalid, OutsideApex and Passthrough. The rest stay unjudged.
func judgeShape(in *Input, claims []*claim, children []*child) {
	listening := map[string]bool{}
	for _, c := range listeningChildren(children) {
		listening[c.apex] = true
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
		switch {
		case !insideApex(in, h, listening):
			c.state, c.message = v1alpha1.HostnameOutsideApex, fmt.Sprintf("%s is neither %s nor a subdomain of it or of an inheriting child apex; a listener for it would make the admission policy refuse the whole Gateway", h, in.Spec.Apex)
		case c.kind == KindTLSRoute && in.Spec.CertMode == v1alpha1.CertModeEdge:
			c.noParent = true
			c.state, c.message = v1alpha1.HostnameInvalid, "an edge Gateway has only plain-HTTP listeners on port 80, which a TLSRoute cannot attach to: this route matches no listener (NoMatchingParent)"
		case passthrough[h] != "":
			c.state, c.message = v1alpha1.HostnamePassthrough, fmt.Sprintf("served by TLS passthrough listener %s; the backend holds the certificate, so no HTTPS listener or Certificate is made", passthrough[h])
		case in.Spec.CertMode == v1alpha1.CertModeHTTP01:
			if msg := nameTooLong(in, h); msg != "" {
				c.state, c.message = v1alpha1.HostnameInvalid, msg
			}
		}
	}
}

// invalidHostname says why h can never be served in this mode, or "".
func invalidHostname(in *Input, h string) string {
	switch {
	case !validHostname(h):
		return fmt.Sprintf("%q is not a valid Gateway API hostname (lowercase DNS name, optionally starting with \"*.\")", h)
	case isWildcard(h) && in.Spec.CertMode == v1alpha1.CertModeHTTP01:
		return "HTTP-01 cannot issue wildcard certificates; use certMode dns01 or existingSecret for wildcard hostnames"
	}
	return ""
}

// insideApex reports whether h is the apex, under it, or under a listening
// child apex.
func insideApex(in *Input, h string, listening map[string]bool) bool {
	return under(h, in.Spec.Apex) || eachDomain(base(h), func(d string) bool { return listening[d] })
}

// nameTooLong says why an http01 hostname cannot be named, or "".
func nameTooLong(in *Input, h string) string {
	if l := HostListenerName(h); len(l) > maxListenerName {
		return fmt.Sprintf("its listener name %s would be %d characters, over the limit of %d; use a shorter first label", l, len(l), maxListenerName)
	}
	if c := HostCertificateName(in.Name, h); len(c) > maxObjectName {
		return fmt.Sprintf("its Certificate name %s would be %d characters, over the limit of %d", c, len(c), maxObjectName)
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
