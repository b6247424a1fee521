package gateway

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// validHostname reports whether h passes the Gateway API Hostname schema: a
// DNS-1123 subdomain of at most 253 characters, the "*." wildcard label
// included in the count.
func validHostname(h string) bool {
	return len(h) <= validation.DNS1123SubdomainMaxLength && len(validation.IsDNS1123Subdomain(base(h))) == 0
}

// isWildcard reports whether h starts with the "*." wildcard label.
func isWildcard(h string) bool { return strings.HasPrefix(h, "*.") }

// base strips the wildcard label from h.
func base(h string) string { return strings.TrimPrefix(h, "*.") }

// under reports whether h is domain or a subdomain of it. A wildcard counts
// by its base: *.example.org is under example.org.
func under(h, domain string) bool {
	b := base(h)
	return b == domain || strings.HasSuffix(b, "."+domain)
}

// eachDomain calls f with d and then each domain above it (b.c for a.b.c,
// then c), longest first, until f returns true. Lookups by suffix keep the
// cost per hostname proportional to its labels, not to the number of child
// apexes or listeners.
func eachDomain(d string, f func(string) bool) {
	for !f(d) {
		i := strings.IndexByte(d, '.')
		if i < 0 {
			return
		}
		d = d[i+1:]
	}
}

// parent is the domain above d ("" for a single label).
func parent(d string) string {
	if i := strings.IndexByte(d, '.'); i >= 0 {
		return d[i+1:]
	}
	return ""
}

// oneLabelBelow reports whether h is exactly one label below domain, the only
// names a TLS wildcard certificate for *.domain covers.
func oneLabelBelow(h, domain string) bool {
	if isWildcard(h) {
		return base(h) == domain
	}
	rest, ok := strings.CutSuffix(h, "."+domain)
	return ok && rest != "" && !strings.Contains(rest, ".")
}
