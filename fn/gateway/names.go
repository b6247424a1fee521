package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

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

// Name limits: a listener name is a SectionName (63), an object name a DNS
// subdomain (253). A name over its limit makes the hostname Invalid; names
// are never truncated, since a truncated name could collide.
const (
	maxListenerName = 63
	maxObjectName   = 253
)

// CertificateKey is the composition resource name of a listener's Certificate.
func CertificateKey(listener string) string { return keyCertificatePrefix + listener }

// ChildListenerName is the listener of an inheriting child apex.
func ChildListenerName(mode v1alpha1.CertMode, child string) string {
	if mode == v1alpha1.CertModeEdge {
		return "edge-child-" + HostKey(child)
	}
	return "https-child-" + HostKey(child)
}

// PinListenerName is the listener that pins a contested hostname to its
// winner's namespace. In http01 it is the hostname's own listener.
func PinListenerName(mode v1alpha1.CertMode, hostname string) string {
	if mode == v1alpha1.CertModeEdge {
		return "edge-" + HostKey(hostname)
	}
	return HostListenerName(hostname)
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

// HostKey is <label>-<hex8>, the part of every per-host name that identifies
// the hostname. A wildcard hostname (only ever named when a contested
// wildcard is pinned in a wildcard mode) uses the label "wildcard", since "*"
// is not allowed in a listener name.
func HostKey(hostname string) string {
	l := Label(hostname)
	if l == "*" {
		l = "wildcard"
	}
	return l + "-" + Hex8(hostname)
}

// HostListenerName is the name of the HTTPS listener of one hostname.
func HostListenerName(hostname string) string {
	return "https-" + HostKey(hostname)
}

// HostCertificateName is the name (and secretName) of the Certificate of one
// hostname's listener.
func HostCertificateName(tgw, hostname string) string {
	return tgw + "-" + HostKey(hostname) + "-tls"
}

// IssuerName is the name of the per-tenant ACME Issuer.
func IssuerName(tgw string) string { return tgw + "-gateway" }

// AccountKeySecretName is the Secret holding the Issuer's ACME account key.
func AccountKeySecretName(tgw string) string { return tgw + "-acme-account" }

// RedirectName is the name of the http→https redirect HTTPRoute.
func RedirectName(tgw string) string { return tgw + "-http-redirect" }
