package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
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
	ListenerHTTP = "http"
)

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
// the hostname.
func HostKey(hostname string) string {
	return Label(hostname) + "-" + Hex8(hostname)
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
