package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// Names of the composition resources (the keys of desired state). They are
// stable domain keys, never list positions, so that Crossplane keeps matching
// a desired object to the same observed one across runs.
const (
	KeyGateway  = "gateway"
	KeyIssuer   = "issuer"
	KeyRedirect = "redirect"
)

// Listener names that do not depend on routes.
const (
	ListenerHTTP      = "http"
	ListenerHTTPS     = "https"
	ListenerHTTPSApex = "https-apex"
	ListenerEdge      = "edge"
	ListenerEdgeApex  = "edge-apex"
)

// Composition resource names of certificates.
const (
	KeyCertificateWildcard = "certificate-wildcard"
	keyCertificatePrefix   = "certificate-"
)

// Name limits: a listener name is a Gateway API SectionName and an object
// name a DNS subdomain, both at most 253 characters. The long form of a
// listener name (a 16-hex-digit hash after a label of up to 63 characters)
// passes 63, which the Gateway API, Cilium and Envoy Gateway all accept (see
// "Names" in docs/design.md). A name over its limit makes the hostname
// Invalid; names are never truncated, since a truncated name could collide.
const (
	maxListenerName = validation.DNS1123SubdomainMaxLength
	maxObjectName   = validation.DNS1123SubdomainMaxLength
)

// Listener name prefixes of the listeners that are named after a hostname
// or a child apex.
const (
	prefixHTTPS     = "https-"
	prefixEdge      = "edge-"
	prefixChild     = "https-child-"
	prefixEdgeChild = "edge-child-"
)

// CertificateKey is the composition resource name of a listener's Certificate.
func CertificateKey(listener string) string { return keyCertificatePrefix + listener }

// IsHostCertificateKey reports whether key is an http01 listener's
// Certificate (CertificateKey), not the dns01 wildcard one.
func IsHostCertificateKey(key string) bool {
	return strings.HasPrefix(key, keyCertificatePrefix) && key != KeyCertificateWildcard
}

// childPrefix and pinPrefix start the names of child apex listeners and of
// pins (in http01, every hostname's own listener): <prefix><label>-<hex8>,
// or the long form when another listener holds that (see Names in
// docs/design.md).
func childPrefix(mode v1alpha1.CertMode) string {
	if mode == v1alpha1.CertModeEdge {
		return prefixEdgeChild
	}
	return prefixChild
}

func pinPrefix(mode v1alpha1.CertMode) string {
	if mode == v1alpha1.CertModeEdge {
		return prefixEdge
	}
	return prefixHTTPS
}

// PassthroughListenerName is the TLS passthrough listener of a service.
func PassthroughListenerName(svc string) string { return "tls-" + svc }

// WildcardCertificateName is the dns01 wildcard Certificate (and its Secret).
func WildcardCertificateName(tgw string) string { return tgw + "-gateway-tls" }

// Label returns the lowercased hostname up to its first dot.
func Label(hostname string) string {
	h := strings.ToLower(hostname)
	if i := strings.IndexByte(h, '.'); i >= 0 {
		return h[:i]
	}
	return h
}

// Hex8 returns the first 8 lowercase hex digits of the SHA-256 of the
// lowercased hostname. Two hostnames that share a first label (harbor.foo…
// and harbor.alice…) still get different names.
func Hex8(hostname string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(hostname)))
	return hex.EncodeToString(sum[:4])
}

// Hex16 returns the first 16 lowercase hex digits of the SHA-256 of the
// lowercased hostname: the long form of a name whose short form another
// hostname already holds.
func Hex16(hostname string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(hostname)))
	return hex.EncodeToString(sum[:8])
}

// HostKey is <label>-<hex8>, the part of every per-host name that identifies
// the hostname. A wildcard hostname (only ever named when a contested
// wildcard is pinned in a wildcard mode) uses the label "wildcard", since "*"
// is not allowed in a listener name.
func HostKey(hostname string) string {
	return keyLabel(hostname) + "-" + Hex8(hostname)
}

// LongHostKey is <label>-<hex16>, the long form of HostKey.
func LongHostKey(hostname string) string {
	return keyLabel(hostname) + "-" + Hex16(hostname)
}

// HashHostKey is h<hex16>, the form of a name whose label-derived forms
// would pass a limit: it has no dash before its hash, so it never equals a
// short or long form (see Names in docs/design.md).
func HashHostKey(hostname string) string {
	return "h" + Hex16(hostname)
}

func keyLabel(hostname string) string {
	if l := Label(hostname); l != "*" {
		return l
	}
	return "wildcard"
}

// HostListenerName is the name of the HTTPS listener of one hostname.
func HostListenerName(hostname string) string {
	return "https-" + HostKey(hostname)
}

// HostCertificateName is the name (and secretName) of the Certificate of one
// hostname's listener, when the listener has the short name.
func HostCertificateName(tgw, hostname string) string {
	return tgw + "-" + HostKey(hostname) + "-tls"
}

// listenerCertificateName is the Certificate of an http01 listener:
// <tgw>-<the listener's host key>-tls, so that it is as unique as the
// listener name.
func listenerCertificateName(tgw, listener string) string {
	return tgw + "-" + strings.TrimPrefix(listener, prefixHTTPS) + "-tls"
}

// IssuerName is the name of the per-tenant ACME Issuer.
func IssuerName(tgw string) string { return tgw + "-gateway" }

// AccountKeySecretName is the Secret holding the Issuer's ACME account key.
func AccountKeySecretName(tgw string) string { return tgw + "-acme-account" }

// RedirectName is the name of the http→https redirect HTTPRoute.
func RedirectName(tgw string) string { return tgw + "-http-redirect" }
