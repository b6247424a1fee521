package gateway

import (
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCertificates(t *testing.T) {
	in := &Input{Name: "cozystack", Namespace: "tenant-root"}
	cert := func(name string, labels map[string]string, dnsNames ...string) *cmv1.Certificate {
		return &cmv1.Certificate{
			TypeMeta:   metav1.TypeMeta{APIVersion: "cert-manager.io/v1", Kind: "Certificate"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "tenant-root", Labels: labels},
			Spec: cmv1.CertificateSpec{
				SecretName: name,
				IssuerRef:  cmmeta.IssuerReference{Kind: "Issuer", Name: "cozystack-gateway"},
				DNSNames:   dnsNames,
			},
		}
	}
	common := map[string]string{LabelManagedBy: ManagedBy, LabelTenantGateway: "cozystack"}
	perListener := map[string]string{LabelManagedBy: ManagedBy, LabelTenantGateway: "cozystack", LabelPerListenerCert: "true"}
	long := "https-www-1810c93498cc3391"
	cases := map[string]struct {
		reason string
		got    *cmv1.Certificate
		want   *cmv1.Certificate
	}{
		"HostListener": {
			reason: "An http01 listener's Certificate covers its hostname alone, is named after the listener, and its Secret is the one the listener refers to",
			got:    hostCertificate(in, HostListenerName("www.example.org"), "www.example.org"),
			want:   cert(HostCertificateName("cozystack", "www.example.org"), perListener, "www.example.org"),
		},
		"HostListenerLongForm": {
			reason: "A listener in the long form gets a Certificate in the long form: two colliding hostnames never share a Secret",
			got:    hostCertificate(in, long, collideB),
			want:   cert("cozystack-www-1810c93498cc3391-tls", perListener, collideB),
		},
		"Wildcard": {
			reason: "The dns01 Certificate carries the names it is given, and not the per-listener label operators wait on",
			got:    wildcardCertificate(in, []string{"example.org", "*.example.org", "alice.example.org", "*.alice.example.org"}),
			want:   cert("cozystack-gateway-tls", common, "example.org", "*.example.org", "alice.example.org", "*.alice.example.org"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
