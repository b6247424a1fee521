package gateway

import (
	"errors"
	"strings"
	"testing"

	cmacme "github.com/cert-manager/cert-manager/pkg/apis/acme/v1"
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/conditions"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

func TestComposeHTTP01(t *testing.T) {
	labels := map[string]string{kube.LabelManagedBy: kube.ManagedBy, kube.LabelTenantGateway: "cozystack"}
	gwLabels := map[string]string{kube.LabelManagedBy: kube.ManagedBy, kube.LabelTenantGateway: "cozystack", kube.LabelGateway: "tenant-root"}
	selector := func(values ...string) *gwapiv1.AllowedRoutes {
		return &gwapiv1.AllowedRoutes{Namespaces: &gwapiv1.RouteNamespaces{
			From: ptr.To(gwapiv1.NamespacesFromSelector),
			Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: values,
			}}},
		}}
	}
	gw := func(class string, sel *gwapiv1.AllowedRoutes) *gwapiv1.Gateway {
		return &gwapiv1.Gateway{
			TypeMeta:   metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway"},
			ObjectMeta: metav1.ObjectMeta{Name: "cozystack", Namespace: "tenant-root", Labels: gwLabels},
			Spec: gwapiv1.GatewaySpec{
				GatewayClassName: gwapiv1.ObjectName(class),
				Listeners:        []gwapiv1.Listener{{Name: "http", Port: 80, Protocol: gwapiv1.HTTPProtocolType, AllowedRoutes: sel}},
			},
		}
	}
	issuer := func(server string) *cmv1.Issuer {
		return &cmv1.Issuer{
			TypeMeta:   metav1.TypeMeta{APIVersion: "cert-manager.io/v1", Kind: "Issuer"},
			ObjectMeta: metav1.ObjectMeta{Name: "cozystack-gateway", Namespace: "tenant-root", Labels: labels},
			Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{ACME: &cmacme.ACMEIssuer{
				Server:     server,
				PrivateKey: cmmeta.SecretKeySelector{LocalObjectReference: cmmeta.LocalObjectReference{Name: "cozystack-acme-account"}},
				Solvers: []cmacme.ACMEChallengeSolver{{HTTP01: &cmacme.ACMEChallengeSolverHTTP01{
					GatewayHTTPRoute: &cmacme.ACMEChallengeSolverHTTP01GatewayHTTPRoute{ParentRefs: []gwapiv1.ParentReference{{
						Group:       ptr.To(gwapiv1.Group("gateway.networking.k8s.io")),
						Kind:        ptr.To(gwapiv1.Kind("Gateway")),
						Name:        "cozystack",
						Namespace:   ptr.To(gwapiv1.Namespace("tenant-root")),
						SectionName: ptr.To(gwapiv1.SectionName("http")),
					}}},
				}}},
			}}},
		}
	}
	redirect := wantRedirect("tenant-root", "cozystack-http-redirect", "cozystack")

	cases := map[string]struct {
		reason string
		in     Input
		want   *Output
	}{
		"Defaults": {
			reason: "An apex alone composes the http01 Gateway (http listener, SEL-HTTP), the prod Issuer and the redirect",
			in:     Input{Name: "cozystack", Namespace: "tenant-root", CertManagerNamespace: "cozy-cert-manager", Spec: v1alpha1.TenantGatewaySpec{Apex: "example.org"}},
			want: &Output{CertMode: v1alpha1.CertModeHTTP01, Listeners: 1, Resources: []kube.Resource{
				{Key: "gateway", Object: gw("cilium", selector("tenant-root", "cozy-cert-manager"))},
				{Key: "issuer", Object: issuer("https://acme-v02.api.letsencrypt.org/directory")},
				{Key: "redirect", Object: redirect},
			}},
		},
		"StagingIssuerOwnClass": {
			reason: "letsencrypt-stage selects the staging directory; the class is passed through",
			in: Input{Name: "cozystack", Namespace: "tenant-root", CertManagerNamespace: "cozy-cert-manager", Spec: v1alpha1.TenantGatewaySpec{
				Apex: "example.org", IssuerName: v1alpha1.IssuerLetsEncryptStage, GatewayClassName: "envoy",
			}},
			want: &Output{CertMode: v1alpha1.CertModeHTTP01, Listeners: 1, Resources: []kube.Resource{
				{Key: "gateway", Object: gw("envoy", selector("tenant-root", "cozy-cert-manager"))},
				{Key: "issuer", Object: issuer("https://acme-staging-v02.api.letsencrypt.org/directory")},
				{Key: "redirect", Object: redirect},
			}},
		},
		"CertManagerInOwnNamespace": {
			reason: "SEL-HTTP omits the cert-manager namespace when it is the TenantGateway's own",
			in:     Input{Name: "cozystack", Namespace: "tenant-root", CertManagerNamespace: "tenant-root", Spec: v1alpha1.TenantGatewaySpec{Apex: "example.org"}},
			want: &Output{CertMode: v1alpha1.CertModeHTTP01, Listeners: 1, Resources: []kube.Resource{
				{Key: "gateway", Object: gw("cilium", selector("tenant-root"))},
				{Key: "issuer", Object: issuer("https://acme-v02.api.letsencrypt.org/directory")},
				{Key: "redirect", Object: redirect},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// Nothing is observed: every resource is looked up by name first.
			tc.want.Probes = tc.want.Resources
			got, err := Compose(tc.in)
			if err != nil {
				t.Fatalf("%s\nCompose(...): unexpected error: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Output{}, "Ready", "ListenerStatus", "Conditions", "Warnings", "Digests")); diff != "" {
				t.Errorf("%s\nCompose(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestComposeRefuses(t *testing.T) {
	cases := map[string]struct {
		reason string
		name   string
		spec   v1alpha1.TenantGatewaySpec
		want   string
	}{
		"InvalidSpec": {
			reason: "Every problem of the spec is reported at once",
			spec:   v1alpha1.TenantGatewaySpec{Apex: "Example.org", IssuerName: "zerossl"},
			want:   `invalid TenantGateway spec: [spec.apex: Invalid value: "Example.org": must be a lowercase DNS name (labels of a-z, 0-9 and '-', separated by dots), spec.issuerName: Unsupported value: "zerossl": supported values: "letsencrypt-prod", "letsencrypt-stage"]`,
		},
		"NameTooLongForALabel": {
			reason: "A name the API server accepts for the XR (up to 253 characters) but not as a label value is refused before anything is composed, naming the label",
			name:   strings.Repeat("a", 64),
			spec:   v1alpha1.TenantGatewaySpec{Apex: "example.org"},
			want:   `invalid TenantGateway spec: metadata.name: Invalid value: "` + strings.Repeat("a", 64) + `": every composed object carries the name as the value of label ` + kube.LabelTenantGateway + `: must be no more than 63 bytes`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := tc.name
			if xr == "" {
				xr = "cozystack"
			}
			_, err := Compose(Input{Name: xr, Namespace: "tenant-root", Spec: tc.spec})
			var invalid *InvalidSpecError
			if !errors.As(err, &invalid) {
				t.Fatalf("%s\nCompose(...): want an InvalidSpecError, got %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("%s\nCompose(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

var (
	wwwListener = HostListenerName("www.example.org")
	wwwCert     = CertificateKey(wwwListener)
	accepted    = map[string]string{"Accepted": "True", "Programmed": "True"}
)

const uid = "7f7586f8-b336-5a17-b4c5-11def6fef8dc"

// someClass is a GatewayClass of an implementation without quirks, which
// the tests' TenantGateways get unless they name one.
var someClass = &Class{Name: "cilium", ControllerName: "example.com/gateway-controller"}

// run composes tenant-root's TenantGateway cozystack; a test that sets no
// GatewayClass gets someClass.
func run(t *testing.T, in Input) *Output {
	t.Helper()
	if in.GatewayClass == nil {
		in.GatewayClass = someClass
	}
	return runNoClass(t, in)
}

// runNoClass is run on a cluster without the GatewayClass named.
func runNoClass(t *testing.T, in Input) *Output {
	t.Helper()
	in.Name, in.Namespace, in.UID, in.CertManagerNamespace = "cozystack", "tenant-root", uid, "cozy-cert-manager"
	if in.Spec.Apex == "" {
		in.Spec.Apex = "example.org"
	}
	if in.Routes == nil {
		in.Routes = []Route{routeTo("tenant-root", "www", "www.example.org")}
	}
	out, err := Compose(in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func condition(out *Output, typ conditions.Type) Condition {
	for _, c := range out.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return Condition{}
}
