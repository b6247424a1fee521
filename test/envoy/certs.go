package envoy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// A TLSSecret is a kubernetes.io/tls Secret the harness makes for a
// certificateRef: a self-signed certificate for DNSNames.
type TLSSecret struct {
	Namespace, Name string
	// DNSNames are the certificate's SANs: those of the composed
	// Certificate that writes the Secret, or, when none does (an
	// operator's existing Secret), the hostnames of the listeners that
	// reference it.
	DNSNames []string
	cert     []byte
	key      []byte
}

// Key is "<namespace>/<name>", the name Envoy Gateway gives the Secret in
// xDS (the SDS secret a filter chain presents).
func (t TLSSecret) Key() string { return t.Namespace + "/" + t.Name }

// certificateRefs maps every Secret the listeners reference
// ("<namespace>/<name>") to the hostnames of those listeners.
func (s *Scenario) certificateRefs() map[string]sets.Set[string] {
	out := map[string]sets.Set[string]{}
	for _, l := range s.Gateway.Spec.Listeners {
		if l.TLS == nil {
			continue
		}
		for _, ref := range l.TLS.CertificateRefs {
			if !isCore(ref.Group, ref.Kind, kindSecret) {
				continue
			}
			k := s.Gateway.Namespace + "/" + string(ref.Name)
			if ref.Namespace != nil {
				k = string(*ref.Namespace) + "/" + string(ref.Name)
			}
			if out[k] == nil {
				out[k] = sets.New[string]()
			}
			if l.Hostname != nil {
				out[k].Insert(string(*l.Hostname))
			}
		}
	}
	return out
}

func (t TLSSecret) object() *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: kindSecret},
		ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: t.cert, corev1.TLSPrivateKeyKey: t.key},
	}
}

// secrets makes a TLSSecret for every Secret the listeners reference.
func (s *Scenario) secrets() ([]TLSSecret, error) {
	hostnames := s.certificateRefs()
	out := make([]TLSSecret, 0, len(hostnames))
	for _, k := range sortedKeys(hostnames) {
		sec := TLSSecret{DNSNames: sets.List(hostnames[k])}
		sec.Namespace, sec.Name, _ = strings.Cut(k, "/")
		for _, c := range s.Certificates {
			if c.Namespace == sec.Namespace && c.Spec.SecretName == sec.Name {
				sec.DNSNames = append([]string(nil), c.Spec.DNSNames...)
			}
		}
		var err error
		if sec.cert, sec.key, err = selfSigned(sec.Key(), sec.DNSNames); err != nil {
			return nil, err
		}
		out = append(out, sec)
	}
	return out, nil
}

// notBefore and notAfter bound every certificate: fixed, so the input only
// varies by the signature, and wide, so the translator never finds one
// expired.
var (
	notBefore = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	notAfter  = time.Date(2999, 12, 31, 0, 0, 0, 0, time.UTC)
)

// selfSigned makes a P-256 certificate and PEM key for dnsNames. The key is
// derived from seed, so a Secret keeps its key from run to run; ECDSA
// signatures are randomised, so the certificate's bytes still vary.
// Envoy serves RSA and ECDSA certificates, so no Ed25519.
func selfSigned(seed string, dnsNames []string) ([]byte, []byte, error) {
	key, err := derivedKey(seed)
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256([]byte(seed))
	cn := seed
	if len(dnsNames) > 0 {
		cn = dnsNames[0]
	}
	tmpl := &x509.Certificate{
		SerialNumber:          new(big.Int).SetUint64(binary.BigEndian.Uint64(sum[:8]) >> 1),
		Subject:               pkix.Name{CommonName: cn},
		DNSNames:              dnsNames,
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot make a certificate for %s: %w", seed, err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot encode the key for %s: %w", seed, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), nil
}

// derivedKey hashes seed into a P-256 scalar, rehashing in the rare case
// the hash is not a valid one.
func derivedKey(seed string) (*ecdsa.PrivateKey, error) {
	b := sha256.Sum256([]byte("function-tenant-gateway test/envoy " + seed))
	for range 8 {
		if k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), b[:]); err == nil {
			return k, nil
		}
		b = sha256.Sum256(b[:])
	}
	return nil, fmt.Errorf("cannot derive a P-256 key from %q", seed)
}
