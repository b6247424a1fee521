package tenant

import (
	"testing"

	cmacme "github.com/cert-manager/cert-manager/pkg/apis/acme/v1"
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kptr "k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// clusterIssuer is a ClusterIssuer as Cozystack's platform chart renders
// it with gateway.enabled: an ACME HTTP-01 solver whose gatewayHTTPRoute
// names the publishing tenant's Gateway, pinned to listener sectionName
// (none when empty: what the chart renders for an edge-terminated
// gateway.className).
func clusterIssuer(name, sectionName string, refs ...gwapiv1.ParentReference) cmv1.ClusterIssuer {
	if len(refs) == 0 {
		ref := gwapiv1.ParentReference{Name: "cozystack", Namespace: kptr.To(gwapiv1.Namespace("tenant-root")), Kind: kptr.To(gwapiv1.Kind("Gateway"))}
		if sectionName != "" {
			ref.SectionName = kptr.To(gwapiv1.SectionName(sectionName))
		}
		refs = []gwapiv1.ParentReference{ref}
	}
	return cmv1.ClusterIssuer{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{ACME: &cmacme.ACMEIssuer{
			Server: "https://acme-v02.api.letsencrypt.org/directory",
			Solvers: []cmacme.ACMEChallengeSolver{
				{DNS01: &cmacme.ACMEChallengeSolverDNS01{}},
				{HTTP01: &cmacme.ACMEChallengeSolverHTTP01{GatewayHTTPRoute: &cmacme.ACMEChallengeSolverHTTP01GatewayHTTPRoute{ParentRefs: refs}}},
			},
		}}},
	}
}

// TestClassNameDriftDefeatsTheEdgeRefusal, as the publishing tenant's
// administrator who wants its Gateway on the edge class while the
// ClusterIssuers keep pinning its http listener: the Tenant derivation
// refuses gatewayClass edge-tunnel on the publishing tenant ("change
// gateway.className instead"); changing gateway.className in this
// project's settings alone, not in Cozystack's values, is not refused by
// anything (the refusal compares the tenant's class with our className
// only), so the claim must say what the drift breaks, naming both values.
func TestClassNameDriftDefeatsTheEdgeRefusal(t *testing.T) {
	cozystack := []cmv1.ClusterIssuer{clusterIssuer("letsencrypt-prod", "http"), clusterIssuer("letsencrypt-stage", "http")}
	rootSpec := appsv1alpha1.TenantSpec{Gateway: yes}

	// The refusal, with both values at cilium.
	refused := derive(t, Input{Name: RootTenant, Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes, GatewayClass: "edge-tunnel"}, Platform: platform(), ClusterIssuers: cozystack}).Refused
	if refused == "" {
		t.Fatal("the publishing tenant was allowed onto the edge class with gateway.className cilium")
	}

	// The way around it: gateway.className moved in this project's settings only.
	p := platform()
	p.ClassName = "edge-tunnel"
	out, err := Derive(Input{Name: RootTenant, Parent: "tenant-root", Spec: rootSpec, Platform: p, ClusterIssuers: cozystack, GatewayClasses: []string{"cilium", "envoy", "edge-tunnel"}})
	if err != nil {
		t.Fatalf("the drifted settings are refused (%v); this test assumes nothing refuses them", err)
	}
	if out.Status.CertMode != "edge" {
		t.Fatalf("the publishing tenant is in certMode %q, want edge: the Gateway keeps its http listener", out.Status.CertMode)
	}
	const finding = " pins its HTTP-01 challenges to listener \"http\" of Gateway tenant-root/cozystack, as Cozystack renders for a gateway.className that is not edge-terminated, but gateway.className \"edge-tunnel\" here is edge-terminated (gateway.edgeTerminatedClasses), so the Gateway has no listener http: every HTTP-01 certificate it issues stops; set gateway.className to one class in both"
	want := Condition{Type: ConditionCozystackValuesAgree, Reason: ReasonValuesDiffer, Message: "The platform settings and Cozystack's platform values disagree: " +
		"ClusterIssuer letsencrypt-prod (spec.acme.solvers[1])" + finding + "; ClusterIssuer letsencrypt-stage (spec.acme.solvers[1])" + finding}
	got, ok := conditionOf(out, ConditionCozystackValuesAgree)
	if !ok {
		t.Fatalf("the publishing tenant has no %s condition: %+v", ConditionCozystackValuesAgree, out.Conditions)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the drift is not named on the claim; -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{want.Message}, out.Warnings); diff != "" {
		t.Errorf("the drift is not warned; -want, +got:\n%s", diff)
	}
}

func conditionOf(out *Output, t ConditionType) (Condition, bool) {
	for _, c := range out.Conditions {
		if c.Type == t {
			return c, true
		}
	}
	return Condition{}, false
}

// TestCozystackValuesAgree: what the publishing tenant's claim says of the
// ClusterIssuers' solvers and of its namespace's host label, and that no
// other tenant says anything.
func TestCozystackValuesAgree(t *testing.T) {
	const (
		prefix = "The platform settings and Cozystack's platform values disagree: "
		agree  = "Nothing Cozystack's charts rendered disagrees with the platform settings: the HTTP-01 solvers of the ClusterIssuers that name Gateway tenant-root/cozystack, and namespace tenant-root's host label"
		label  = `namespace tenant-root carries the host label "example.com" (Cozystack's charts write it from their publishing.host), but publishing.host is "example.org": the root tenant rewrites the label, which moves every tenant's zone and so what each may serve, and a chart that writes it again moves it back; set publishing.host to one apex in both`
	)
	edge := func() Platform { p := platform(); p.ClassName = "edge-tunnel"; return p }()
	root := func(p Platform, issuers []cmv1.ClusterIssuer, labels map[string]string, shown ...xpv2.Condition) Input {
		return Input{Name: RootTenant, Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, Platform: p, ClusterIssuers: issuers, ParentLabels: labels, Conditions: shown}
	}
	agreeing := &Condition{Type: ConditionCozystackValuesAgree, Status: true, Reason: ReasonValuesAgree, Message: agree}
	differ := func(m string) *Condition {
		return &Condition{Type: ConditionCozystackValuesAgree, Reason: ReasonValuesDiffer, Message: prefix + m}
	}
	unpinned := `ClusterIssuer letsencrypt-prod (spec.acme.solvers[1]) names Gateway tenant-root/cozystack without a listener, as Cozystack renders for an edge-terminated gateway.className, but gateway.className "cilium" here is not edge-terminated, so the Gateway has a listener http: its challenge routes attach to every listener that admits them; set gateway.className to one class in both`
	ingress := `ClusterIssuer letsencrypt-prod (spec.acme.solvers[1]) names Gateway tenant-bob/cozystack, the Gateway of Cozystack's publishing tenant, but publishing.ingressName here is "tenant-root": the refusal that keeps the publishing tenant's class as edge-terminated as gateway.className guards tenant-root, not tenant-bob; set publishing.ingressName to one namespace in both`
	cases := map[string]struct {
		reason   string
		in       Input
		want     *Condition
		warnings []string
	}{
		"Pinned": {
			reason: "cilium, and the solvers pin http, as Cozystack renders for cilium: True",
			in:     root(platform(), []cmv1.ClusterIssuer{clusterIssuer("letsencrypt-prod", "http")}, map[string]string{kube.LabelNamespaceHost: "example.org"}),
			want:   agreeing,
		},
		"EdgeUnpinned": {
			reason: "edge, and the solvers name no listener, as Cozystack renders for an edge class: True",
			in:     root(edge, []cmv1.ClusterIssuer{clusterIssuer("letsencrypt-prod", "")}, nil),
			want:   agreeing,
		},
		"NoClusterIssuers": {
			in:   root(platform(), nil, nil),
			want: agreeing,
		},
		"OtherIngressName": {
			reason: "a solver on the Gateway cozystack of another namespace: Cozystack's publishing.ingressName differs, and the edge refusal guards the wrong tenant",
			in:     root(platform(), []cmv1.ClusterIssuer{clusterIssuer("letsencrypt-prod", "", gwapiv1.ParentReference{Name: "cozystack", Namespace: kptr.To(gwapiv1.Namespace("tenant-bob")), SectionName: kptr.To(gwapiv1.SectionName("http"))})}, nil),
			want:   differ(ingress), warnings: []string{prefix + ingress},
		},
		"OtherGateways": {
			reason: "solvers that name another Gateway, or none in a namespace (a Gateway in each challenge's namespace), or another kind, judge nothing here",
			in: root(edge, []cmv1.ClusterIssuer{clusterIssuer("other", "", gwapiv1.ParentReference{Name: "edge", Namespace: kptr.To(gwapiv1.Namespace("tenant-root")), SectionName: kptr.To(gwapiv1.SectionName("http"))},
				gwapiv1.ParentReference{Name: "cozystack", SectionName: kptr.To(gwapiv1.SectionName("http"))},
				gwapiv1.ParentReference{Name: "cozystack", Namespace: kptr.To(gwapiv1.Namespace("tenant-root")), Kind: kptr.To(gwapiv1.Kind("Service")), SectionName: kptr.To(gwapiv1.SectionName("http"))})}, nil),
			want: agreeing,
		},
		"CiliumUnpinned": {
			reason: "cilium here, but the solver names no listener, as Cozystack renders for an edge class: Cozystack's className differs",
			in:     root(platform(), []cmv1.ClusterIssuer{clusterIssuer("letsencrypt-prod", "")}, nil),
			want:   differ(unpinned), warnings: []string{prefix + unpinned},
		},
		"PinnedElsewhere": {
			reason:   "cilium, and a solver pinned to a listener that does not serve port 80",
			in:       root(platform(), []cmv1.ClusterIssuer{clusterIssuer("letsencrypt-prod", "https")}, nil),
			want:     differ(`ClusterIssuer letsencrypt-prod (spec.acme.solvers[1]) pins its HTTP-01 challenges to listener "https" of Gateway tenant-root/cozystack, but only listener "http" serves port 80 there (gateway.className "cilium" is not edge-terminated, so the Gateway has a listener http): every HTTP-01 certificate it issues stops; pin "http"`),
			warnings: []string{prefix + `ClusterIssuer letsencrypt-prod (spec.acme.solvers[1]) pins its HTTP-01 challenges to listener "https" of Gateway tenant-root/cozystack, but only listener "http" serves port 80 there (gateway.className "cilium" is not edge-terminated, so the Gateway has a listener http): every HTTP-01 certificate it issues stops; pin "http"`},
		},
		"ShownAlready": {
			reason: "the same disagreement the claim already shows is not warned again",
			in:     root(platform(), []cmv1.ClusterIssuer{clusterIssuer("letsencrypt-prod", "")}, nil, xpv2.Condition{Type: xpv2.ConditionType(ConditionCozystackValuesAgree), Status: corev1.ConditionFalse, Message: prefix + unpinned}),
			want:   differ(unpinned),
		},
		"HostLabel": {
			reason: "the publishing namespace's host label, as Cozystack's charts wrote it, is not publishing.host",
			in:     root(platform(), nil, map[string]string{kube.LabelNamespaceHost: "example.com"}),
			want:   differ(label), warnings: []string{prefix + label},
		},
		"BothInOrder": {
			reason: "every disagreement, the ClusterIssuers first, by name",
			in:     root(platform(), []cmv1.ClusterIssuer{clusterIssuer("letsencrypt-prod", ""), clusterIssuer("a-first", "http")}, map[string]string{kube.LabelNamespaceHost: "example.com"}),
			want:   differ(unpinned + "; " + label), warnings: []string{prefix + unpinned + "; " + label},
		},
		"RootWithoutGateway": {
			reason: "a publishing tenant without a Gateway has none for the solvers to name: only its label is compared",
			in: Input{Name: RootTenant, Parent: "tenant-root", Platform: platform(), ClusterIssuers: []cmv1.ClusterIssuer{clusterIssuer("letsencrypt-prod", "")},
				ParentLabels: map[string]string{kube.LabelNamespaceHost: "example.org"}},
			want: agreeing,
		},
		"OtherTenant": {
			reason: "no other tenant says anything about Cozystack's values",
			in: Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, Platform: platform(),
				ClusterIssuers: []cmv1.ClusterIssuer{clusterIssuer("letsencrypt-prod", "")}, ParentLabels: map[string]string{kube.LabelNamespaceHost: "example.com"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Derive(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got *Condition
			if c, ok := conditionOf(out, ConditionCozystackValuesAgree); ok {
				got = &c
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			var warnings []string
			for _, w := range out.Warnings {
				if tc.want != nil && w == tc.want.Message {
					warnings = append(warnings, w)
				}
			}
			if diff := cmp.Diff(tc.warnings, warnings); diff != "" {
				t.Errorf("%s: warnings\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestHostDriftDefeatsNestedRefusal, as alice, the administrator of a
// tenant: bob's zone is bob.example.com, since the publishing namespace's
// host label, which Cozystack's charts write from their publishing.host,
// is example.com, while this project's publishing.host says example.org.
// Alice asks an administrator to give her nested tenant x, which owns its
// Gateway, the host shop.bob.example.com, "an apex of its own": the
// refusal of a host in another tenant's zone compares it with
// publishing.host only, so with the drift it passes as outside the
// platform's zone, and in dns01 or existingSecret mode alice's namespace
// gets a certificate for bob's names. The derivation must refuse it,
// naming both zones, and still allow an apex outside both.
func TestHostDriftDefeatsNestedRefusal(t *testing.T) {
	parentLabels := map[string]string{kube.LabelNamespaceHost: "x.alice.example.com", kube.LabelNamespaceGateway: "tenant-alice"}
	nested := func(host string, publishing map[string]string) Input {
		return Input{Name: "shop", Parent: "tenant-alice-x", Spec: appsv1alpha1.TenantSpec{Host: host, Gateway: yes},
			ParentLabels: parentLabels, PublishingLabels: publishing, Platform: platform()}
	}
	cozystack := map[string]string{kube.LabelNamespaceHost: "example.com", kube.LabelNamespaceGateway: "tenant-root"}
	cases := map[string]struct {
		reason string
		in     Input
		want   string
	}{
		"BobsZoneUnderDrift": {
			reason: "a name in bob's zone, inside the publishing namespace's label though outside publishing.host, is refused naming both",
			in:     nested("shop.bob.example.com", cozystack),
			want:   `spec.host "shop.bob.example.com" must equal or be under the parent tenant's host "x.alice.example.com" (namespace tenant-alice-x): it is outside publishing.host "example.org" but inside "example.com", the host label of the publishing tenant's namespace tenant-root, so the platform settings and Cozystack's values disagree on the platform's zone, and a name in it may be another tenant's; set publishing.host to one apex in both`,
		},
		"ApexOfTheLabelUnderDrift": {
			in:   nested("example.com", cozystack),
			want: `spec.host "example.com" must equal or be under the parent tenant's host "x.alice.example.com" (namespace tenant-alice-x): it is outside publishing.host "example.org" but inside "example.com", the host label of the publishing tenant's namespace tenant-root, so the platform settings and Cozystack's values disagree on the platform's zone, and a name in it may be another tenant's; set publishing.host to one apex in both`,
		},
		"OwnApexUnderDrift": {
			reason: "an apex outside both zones is still an owning tenant's own",
			in:     nested("customer1.example", cozystack),
		},
		"NoDrift": {
			reason: "the label agrees with publishing.host: example.com is no zone of the platform",
			in:     nested("shop.bob.example.com", map[string]string{kube.LabelNamespaceHost: "example.org"}),
		},
		"InsideTheParent": {
			in: nested("www.x.alice.example.com", cozystack),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := derive(t, tc.in).Refused; got != tc.want {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, cmp.Diff(tc.want, got))
			}
		})
	}
}

// TestNeedsPublishingNamespace: only the run that judges a nested owning
// tenant's own apex reads the publishing namespace.
func TestNeedsPublishingNamespace(t *testing.T) {
	alice := map[string]string{kube.LabelNamespaceHost: "alice.example.org"}
	cases := map[string]struct {
		name, parent, host string
		owning             bool
		labels             map[string]string
		want               bool
	}{
		"NestedOwnApex":      {"x", "tenant-alice", "customer1.example", true, alice, true},
		"NestedParentNoHost": {"x", "tenant-alice", "customer1.example", true, nil, true},
		"NestedInParent":     {"x", "tenant-alice", "x.alice.example.org", true, alice, false},
		"NestedNotOwning":    {"x", "tenant-alice", "customer1.example", false, alice, false},
		"NestedDerived":      {"x", "tenant-alice", "", true, alice, false},
		"DirectChild":        {"acme", "tenant-root", "customer1.example", true, nil, false},
		"Root":               {"root", "tenant-root", "", true, nil, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := NeedsPublishingNamespace(tc.name, tc.parent, tc.host, tc.owning, tc.labels, platform()); got != tc.want {
				t.Errorf("NeedsPublishingNamespace = %t, want %t", got, tc.want)
			}
		})
	}
}
