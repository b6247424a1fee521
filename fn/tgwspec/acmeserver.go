package tgwspec

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/mail"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// Bounds of an ACME server's fields, as the XRD declares them.
const (
	maxACMEDirectory = 2048
	maxEABKeyID      = 256
	// maxEmail is the longest forward path SMTP carries (RFC 5321).
	maxEmail = 254
)

// ValidateACMEServer checks an ACME server at p: spec.acme, or an entry of
// the platform settings' publishing.certificates.acmeServers. The directory
// is https (cert-manager sends the account's signed requests and the
// binding there), the CA bundle holds PEM certificates and nothing else,
// an External Account Binding has both its key ID and its Secret.
func ValidateACMEServer(p *field.Path, a *v1alpha1.ACMEServer) field.ErrorList {
	errs := validateDirectory(p.Child("server"), a.Server)
	if a.CABundle != "" {
		errs = append(errs, validateCABundle(p.Child("caBundle"), a.CABundle)...)
	}
	if a.ExternalAccountBinding != nil {
		errs = append(errs, validateEAB(p.Child("externalAccountBinding"), a.ExternalAccountBinding)...)
	}
	if a.Email != "" {
		errs = append(errs, validateEmail(p.Child("email"), a.Email)...)
	}
	return errs
}

const exampleDirectory = "https://acme.example.org/directory"

func validateDirectory(p *field.Path, v string) field.ErrorList {
	switch {
	case v == "":
		return field.ErrorList{field.Required(p, "the https:// URL of the ACME directory, such as "+exampleDirectory)}
	case len(v) > maxACMEDirectory:
		return field.ErrorList{field.TooLong(p, "", maxACMEDirectory)}
	}
	u, err := url.Parse(v)
	if err != nil || !strings.HasPrefix(v, "https://") || u.Host == "" {
		return field.ErrorList{field.Invalid(p, v, "must be an https:// URL with a host, such as "+exampleDirectory+": the ACME account's requests and its External Account Binding go there")}
	}
	return nil
}

// validateCABundle requires PEM text of CERTIFICATE blocks, each a parsable
// X.509 certificate. Text between blocks (a bundle's comments) is allowed;
// any other block is refused, so that a key pasted by mistake is not copied
// into the Issuer. The bundle's content never goes into a message.
func validateCABundle(p *field.Path, v string) field.ErrorList {
	if len(v) > v1alpha1.MaxCABundle {
		return field.ErrorList{field.TooLong(p, "", v1alpha1.MaxCABundle)}
	}
	blocks := 0
	for rest := []byte(v); ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		blocks++
		if b.Type != "CERTIFICATE" {
			return field.ErrorList{field.Invalid(p, field.OmitValueType{}, fmt.Sprintf("PEM block %d is a %q block: a CA bundle holds only CERTIFICATE blocks", blocks, b.Type))}
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return field.ErrorList{field.Invalid(p, field.OmitValueType{}, fmt.Sprintf("PEM block %d is not an X.509 certificate: %v", blocks, err))}
		}
	}
	if blocks == 0 {
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, "must be PEM text holding at least one -----BEGIN CERTIFICATE----- block (the PEM itself, not base64 of it)")}
	}
	return nil
}

func validateEAB(p *field.Path, e *v1alpha1.ExternalAccountBinding) field.ErrorList {
	const both = "an External Account Binding needs both keyID and keySecretRef"
	var errs field.ErrorList
	switch {
	case e.KeyID == "":
		errs = append(errs, field.Required(p.Child("keyID"), "the key ID the CA gave for the account: "+both))
	case len(e.KeyID) > maxEABKeyID:
		errs = append(errs, field.TooLong(p.Child("keyID"), "", maxEABKeyID))
	}
	if e.KeySecretRef == nil {
		return append(errs, field.Required(p.Child("keySecretRef"), "the Secret (name and key) holding the CA's MAC key: "+both))
	}
	return append(errs, validateSecretKey(p.Child("keySecretRef"), e.KeySecretRef)...)
}

func validateEmail(p *field.Path, v string) field.ErrorList {
	if len(v) > maxEmail {
		return field.ErrorList{field.TooLong(p, "", maxEmail)}
	}
	if a, err := mail.ParseAddress(v); err != nil || a.Address != v {
		return field.ErrorList{field.Invalid(p, v, "must be a bare email address such as ops@example.org, without a display name or angle brackets")}
	}
	return nil
}
