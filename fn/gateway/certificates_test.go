package gateway

import (
	"slices"
	"strings"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
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
	common := map[string]string{kube.LabelManagedBy: kube.ManagedBy, kube.LabelTenantGateway: "cozystack"}
	perListener := map[string]string{kube.LabelManagedBy: kube.ManagedBy, kube.LabelTenantGateway: "cozystack", kube.LabelPerListenerCert: "true"}
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

// TestAttackCertificateForALongLabel: alice, on an http01 Gateway, routes
// names whose first label is longer than DNS allows (the Gateway API
// schema bounds only the whole name), to make the function order
// certificates no CA issues: each spends an order of the platform's and
// never gets ready. What must hold: a label over 63 characters is Invalid,
// with no listener and no Certificate; 63 is served as usual.
func TestAttackCertificateForALongLabel(t *testing.T) {
	cases := map[string]struct {
		label     string
		wantState v1alpha1.HostnameState
		wantCerts int
	}{
		"Label63":  {label: strings.Repeat("a", 63), wantState: v1alpha1.HostnameListening, wantCerts: 1},
		"Label64":  {label: strings.Repeat("a", 64), wantState: v1alpha1.HostnameInvalid},
		"Label200": {label: strings.Repeat("b", 200), wantState: v1alpha1.HostnameInvalid},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := tc.label + ".alice.example.org"
			out := attack(t, Input{Spec: http01Spec, Namespaces: platform(), Routes: []Route{routeTo("tenant-alice", "long", h)}})
			var certs int
			for _, r := range out.Resources {
				if c, ok := r.Object.(*cmv1.Certificate); ok && slices.Contains(c.Spec.DNSNames, h) {
					certs++
				}
			}
			got := struct {
				State v1alpha1.HostnameState
				Certs int
			}{v1alpha1.HostnameState(hostnameStates(out)[h+" HTTPRoute/tenant-alice/long"]), certs}
			want := struct {
				State v1alpha1.HostnameState
				Certs int
			}{tc.wantState, tc.wantCerts}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("a route for a %d-character label, -want +got:\n%s", len(tc.label), diff)
			}
		})
	}
}
