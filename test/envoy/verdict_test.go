package envoy

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	tgwv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/test/render"
)

// A golden is a copy of a render scenario's files in a temp dir, decoded,
// for a test to break one thing in.
type golden struct {
	dir                string
	required, expected []map[string]any
}

// copyGolden copies a render scenario's folder (required.yaml,
// observed.yaml, expected.yaml) into a temp dir and decodes what a test may change.
func copyGolden(t *testing.T, scenario string) *golden {
	t.Helper()
	root, err := render.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := render.Find(root, scenario)
	if err != nil {
		t.Fatal(err)
	}
	src := sc.Dir
	g := &golden{dir: t.TempDir()}
	for _, f := range []string{"required.yaml", "observed.yaml", render.FileExpected} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(g.dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	g.required = readGoldenDocs(t, filepath.Join(g.dir, "required.yaml"))
	g.expected = readGoldenDocs(t, filepath.Join(g.dir, render.FileExpected))
	return g
}

func readGoldenDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	d, err := readDocs(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// write writes the changed files back.
func (g *golden) write(t *testing.T) {
	t.Helper()
	for f, docs := range map[string][]map[string]any{"required.yaml": g.required, render.FileExpected: g.expected} {
		var b strings.Builder
		for _, d := range docs {
			y, err := yaml.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("---\n")
			b.Write(y)
		}
		if err := os.WriteFile(filepath.Join(g.dir, f), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// edit decodes the one object of group/kind (and name, when not empty)
// in docs into out, lets change change it and encodes it back.
func edit[T any](t *testing.T, docs []map[string]any, gk, name string, change func(*T)) {
	t.Helper()
	for i, d := range docs {
		md, _ := d["metadata"].(map[string]any)
		if groupKind(d) != gk || name != "" && md["name"] != name {
			continue
		}
		out := new(T)
		if err := convert(d, out); err != nil {
			t.Fatal(err)
		}
		change(out)
		m := map[string]any{}
		if err := convert(out, &m); err != nil {
			t.Fatal(err)
		}
		docs[i] = m
		return
	}
	t.Fatalf("the golden holds no %s %q", gk, name)
}

func (g *golden) gateway(t *testing.T, change func(*gwapiv1.Gateway)) {
	t.Helper()
	edit(t, g.expected, groupGateway+"/"+kindGateway, "", change)
}

func (g *golden) status(t *testing.T, change func(*tgwv1alpha1.TenantGatewayStatus)) {
	t.Helper()
	edit(t, g.expected, groupCozyGateway+"/"+kindTGW, "", func(x *tgwv1alpha1.TenantGateway) { change(&x.Status) })
}

func (g *golden) certificate(t *testing.T, name string, change func(*cmv1.Certificate)) {
	t.Helper()
	edit(t, g.expected, groupCertManager+"/"+kindCertificate, name, change)
}

// addToCluster adds objects to what the function read.
func (g *golden) addToCluster(t *testing.T, objects string) {
	t.Helper()
	g.required = append(g.required, docs(t, objects)...)
}

// listener returns the Gateway listener of that name.
func listener(t *testing.T, gw *gwapiv1.Gateway, name string) *gwapiv1.Listener {
	t.Helper()
	i := slices.IndexFunc(gw.Spec.Listeners, func(l gwapiv1.Listener) bool { return string(l.Name) == name })
	if i < 0 {
		t.Fatalf("the golden Gateway has no listener %s", name)
	}
	return &gw.Spec.Listeners[i]
}

// admitByName makes a listener admit exactly the named namespaces (and the
// gateway label), the way the function writes apex listeners.
func admitByName(l *gwapiv1.Listener, namespaces ...string) {
	l.AllowedRoutes.Namespaces.Selector = &metav1.LabelSelector{
		MatchLabels:      map[string]string{"namespace.cozystack.io/gateway": "tenant-root"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: labelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: namespaces}},
	}
}

// hostnamelessRoute is an HTTPRoute of tenant-alice without hostnames, on
// the Gateway of the existing-secret scenario.
const hostnamelessRoute = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: catch-all, namespace: tenant-alice}
spec:
  parentRefs: [{name: cozystack, namespace: tenant-root}]
  rules: [{backendRefs: [{name: catch-all, port: 80}]}]
`

// TestJudgeFails proves the judge can fail: each case copies a real
// golden render into a temp dir, breaks one thing the way a bug in the
// function would (or, for the controls, nothing), loads it as TestExamples
// does and expects exactly the disagreements listed.
func TestJudgeFails(t *testing.T) {
	egctl := Egctl(t)
	cases := map[string]struct {
		reason   string
		scenario string
		mutate   func(t *testing.T, g *golden)
		// want are the disagreements expected, "<check> <subject>"; detail
		// is a part of one's detail that says the judge failed for the
		// reason meant.
		want   []string
		detail string
	}{
		"Unbroken": {
			reason:   "The control: the conflict golden as committed has no disagreement.",
			scenario: "conflict",
			mutate:   func(*testing.T, *golden) {},
		},
		"PinAdmitsTheLoser": {
			reason:   "The listener pinned to the conflict's winner admits the loser's namespace too: the loser is served the contested hostname.",
			scenario: "conflict",
			mutate: func(t *testing.T, g *golden) {
				g.gateway(t, func(gw *gwapiv1.Gateway) {
					admitByName(listener(t, gw, "https-harbor-91fb3185"), "cozy-harbor", "tenant-root")
				})
			},
			want: []string{
				"Refused HTTPRoute/tenant-root/harbor harbor.example.org",
				"ServedRouting HTTPRoute/cozy-harbor/harbor harbor.example.org",
			},
			detail: `routes Host: harbor.example.org to its backends [tenant-root/harbor:80]`,
		},
		"PinRemoved": {
			reason:   "dns01 without the pin for a contested hostname: the wildcard listener, which admits the loser, serves it.",
			scenario: "conflict-dns01",
			mutate: func(t *testing.T, g *golden) {
				g.gateway(t, func(gw *gwapiv1.Gateway) {
					gw.Spec.Listeners = slices.DeleteFunc(gw.Spec.Listeners, func(l gwapiv1.Listener) bool { return l.Name == "https-harbor-91fb3185" })
				})
			},
			want: []string{
				"Refused HTTPRoute/tenant-root/landing harbor.example.org",
				"ServedCertificate HTTPRoute/cozy-harbor/harbor harbor.example.org",
				"ServedRouting HTTPRoute/cozy-harbor/harbor harbor.example.org",
			},
			detail: `status says listener https-harbor-91fb3185 serves it, but Envoy picks filter chain tenant-root/cozystack/https`,
		},
		"DuplicateFilterChains": {
			reason:   "tls-api admits the namespace whose two TLSRoutes hold api.example.org: two filter chains for one server name.",
			scenario: "passthrough-duplicate",
			mutate: func(t *testing.T, g *golden) {
				g.gateway(t, func(gw *gwapiv1.Gateway) {
					admitByName(listener(t, gw, "tls-api"), "cozy-api")
				})
			},
			want: []string{
				"FilterChains tenant-root/cozystack/https",
				"Refused TLSRoute/cozy-api/kubernetes-api api.example.org",
				"RouteRefused TLSRoute/cozy-api/kubernetes-api",
				"RouteRefused TLSRoute/cozy-api/kubernetes-api-canary",
			},
			detail: `both match server names api.example.org`,
		},
		"ReachOnTheWiderListener": {
			reason:   "alice stays admitted on her *.alice.example.org listener while her wildcard reaches into bob's zone: the shared port-80 table lists *.x.bob.alice.example.org twice.",
			scenario: "reach-into-zone-edge",
			mutate: func(t *testing.T, g *golden) {
				g.gateway(t, func(gw *gwapiv1.Gateway) {
					for i := range gw.Spec.Listeners {
						if sel := gw.Spec.Listeners[i].AllowedRoutes.Namespaces.Selector; sel != nil {
							sel.MatchExpressions = slices.DeleteFunc(sel.MatchExpressions, func(r metav1.LabelSelectorRequirement) bool { return r.Operator == metav1.LabelSelectorOpNotIn })
						}
					}
				})
			},
			want: []string{
				"Refused HTTPRoute/tenant-alice/grab *.x.bob.alice.example.org",
				"Refused HTTPRoute/tenant-alice/www www.alice.example.org",
				"RouteRefused HTTPRoute/tenant-alice/grab",
				"RouteRefused HTTPRoute/tenant-alice/www",
				"RouteTable tenant-root/cozystack/edge",
				"ServedRouting HTTPRoute/tenant-alice-bob/own *.x.bob.alice.example.org",
				"ServedRouting HTTPRoute/tenant-alice-bob/own *.x.bob.alice.example.org",
			},
			detail: `both list domain *.x.bob.alice.example.org`,
		},
		"NotDelegatedAdmitted": {
			reason:   "The listener of a hostname admits a namespace it was not delegated to: that namespace's NotDelegated claim is served.",
			scenario: "delegation",
			mutate: func(t *testing.T, g *golden) {
				g.gateway(t, func(gw *gwapiv1.Gateway) {
					admitByName(listener(t, gw, "https-harbor-91fb3185"), "cozy-harbor", "tenant-foo")
				})
			},
			want: []string{
				"Refused HTTPRoute/tenant-foo/harbor harbor.example.org",
				"ServedRouting HTTPRoute/cozy-harbor/harbor harbor.example.org",
			},
			detail: `routes Host: harbor.example.org to its backends [tenant-foo/harbor:80]`,
		},
		"WrongCertificateRef": {
			reason:   "A listener refers to a Secret other than the one its Certificate writes (status.listeners' certificateName).",
			scenario: "status-ready",
			mutate: func(t *testing.T, g *golden) {
				g.gateway(t, func(gw *gwapiv1.Gateway) {
					listener(t, gw, "https-www-8a59b0a3").TLS.CertificateRefs[0].Name = "cozystack-www-wrong-tls"
				})
			},
			want:   []string{"ServedCertificate HTTPRoute/tenant-root/www www.example.org"},
			detail: `Envoy presents Secret "tenant-root/cozystack-www-wrong-tls"`,
		},
		"CertificateWithoutItsHostname": {
			reason:   "The Certificate of a listener names another hostname: clients see a name mismatch the status does not warn of.",
			scenario: "status-ready",
			mutate: func(t *testing.T, g *golden) {
				g.certificate(t, "cozystack-www-8a59b0a3-tls", func(c *cmv1.Certificate) {
					c.Spec.DNSNames = []string{"shop.example.org"}
				})
			},
			want:   []string{"ServedCertificate HTTPRoute/tenant-root/www www.example.org"},
			detail: `SANs [shop.example.org]) does not cover it`,
		},
		"Port80AdmitsEveryNamespace": {
			reason:   "The http listener admits every namespace: a tenant's hostname is served in plain HTTP on port 80 instead of redirected.",
			scenario: "conflict",
			mutate: func(t *testing.T, g *golden) {
				g.gateway(t, func(gw *gwapiv1.Gateway) {
					all := gwapiv1.NamespacesFromAll
					listener(t, gw, "http").AllowedRoutes.Namespaces = &gwapiv1.RouteNamespaces{From: &all}
				})
			},
			want:   []string{"Port80 harbor.example.org", "Port80 registry.foo.example.org"},
			detail: `should redirect it to https`,
		},
		"ChildListenerRemoved": {
			reason:   "edge without the child's listener: the child's hostname falls to edge (*.example.org), which does not admit it.",
			scenario: "edge",
			mutate: func(t *testing.T, g *golden) {
				g.gateway(t, func(gw *gwapiv1.Gateway) {
					gw.Spec.Listeners = slices.DeleteFunc(gw.Spec.Listeners, func(l gwapiv1.Listener) bool { return l.Name == "edge-child-alice-cf290f3a" })
				})
			},
			want: []string{
				"ServedAccepted HTTPRoute/tenant-alice/harbor harbor.alice.example.org",
				"ServedRouting HTTPRoute/tenant-alice/harbor harbor.alice.example.org",
			},
			detail: `NotAllowedByListeners`,
		},
		"EdgeWildcardAdmitsAChild": {
			reason: "edge, with the apex's wildcard listener admitting the child too: both port-80 listeners give the child's name a virtual host, " +
				"in the one route table of the port, which Envoy rejects.",
			scenario: "edge",
			mutate: func(t *testing.T, g *golden) {
				g.gateway(t, func(gw *gwapiv1.Gateway) {
					admitByName(listener(t, gw, "edge"), "default", "tenant-alice", "tenant-root")
				})
			},
			want:   []string{"RouteTable tenant-root/cozystack/edge"},
			detail: `both list domain harbor.alice.example.org`,
		},
		"StatusCallsALoserServed": {
			reason:   "The status reports a conflict loser's claim Listening: the Gateway does not serve it to the loser.",
			scenario: "delegation",
			mutate: func(t *testing.T, g *golden) {
				g.status(t, func(st *tgwv1alpha1.TenantGatewayStatus) {
					i := slices.IndexFunc(st.Hostnames, func(h tgwv1alpha1.HostnameStatus) bool { return h.Route == "HTTPRoute/tenant-root/shop" })
					st.Hostnames[i].State, st.Hostnames[i].Message = tgwv1alpha1.HostnameListening, "listener https-app-0cfd45c8"
				})
			},
			want:   []string{"ServedRouting HTTPRoute/tenant-root/shop app.foo.example.org"},
			detail: `does not route to its backends [tenant-root/shop:80]`,
		},
		"CiliumKindsOnEnvoyGateway": {
			reason:   "The envoy-gateway scenario with the Cilium pair of kinds on its HTTPS listener: Envoy Gateway refuses the listener (InvalidRouteKinds).",
			scenario: "envoy-gateway",
			mutate: func(t *testing.T, g *golden) {
				g.gateway(t, func(gw *gwapiv1.Gateway) {
					l := listener(t, gw, "https-docs-6da878b6")
					group := gwapiv1.Group(groupGateway)
					l.AllowedRoutes.Kinds = append(l.AllowedRoutes.Kinds, gwapiv1.RouteGroupKind{Group: &group, Kind: kindTLSRoute})
				})
			},
			want: []string{
				"GatewayAccepted tenant-root/cozystack",
				"ListenerHealthy https-docs-6da878b6",
				"ServedCertificate HTTPRoute/tenant-root/api-docs docs.example.org",
				"ServedRouting HTTPRoute/tenant-root/api-docs docs.example.org",
			},
			detail: `InvalidRouteKinds`,
		},
		"PassthroughListenerRefusesItsRoute": {
			reason:   "A passthrough listener that does not admit the namespace of the TLSRoute the status reports Passthrough.",
			scenario: "envoy-gateway",
			mutate: func(t *testing.T, g *golden) {
				g.gateway(t, func(gw *gwapiv1.Gateway) {
					admitByName(listener(t, gw, "tls-api"), "tenant-root")
				})
			},
			want: []string{
				"ServedAccepted TLSRoute/default/kubernetes-api api.example.org",
				"ServedRouting TLSRoute/default/kubernetes-api api.example.org",
			},
			detail: `does not forward to [default/kubernetes-api:443]`,
		},
		"HostnamelessRouteUnlisted": {
			reason:   "A hostname-less route the status does not list is served on the child's listener.",
			scenario: "existing-secret",
			mutate: func(t *testing.T, g *golden) {
				g.addToCluster(t, hostnamelessRoute)
			},
			want: []string{
				"Hostnameless HTTPRoute/tenant-alice/catch-all",
				"RouteRefused HTTPRoute/tenant-alice/catch-all",
			},
			detail: `served on listeners [https-child-alice-cf290f3a]`,
		},
		"HostnamelessRouteListed": {
			reason:   "The control for the case above: listed with the listener it reaches, the route is no disagreement.",
			scenario: "existing-secret",
			mutate: func(t *testing.T, g *golden) {
				g.addToCluster(t, hostnamelessRoute)
				g.status(t, func(st *tgwv1alpha1.TenantGatewayStatus) {
					st.HostnamelessRoutes = []tgwv1alpha1.HostnamelessRouteStatus{{Route: "HTTPRoute/tenant-alice/catch-all", Listeners: []string{"https-child-alice-cf290f3a"}}}
				})
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := copyGolden(t, tc.scenario)
			tc.mutate(t, g)
			g.write(t)
			s, err := LoadScenario(g.dir, filepath.Join(g.dir, render.FileExpected))
			if err != nil {
				t.Fatal(err)
			}
			s.AsForEnvoyGateway()
			r, err := Translate(context.Background(), egctl, s)
			if err != nil {
				t.Fatal(err)
			}
			v, err := Judge(s, r)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			details := ""
			for _, d := range v.Disagreements {
				got = append(got, d.Check+" "+d.Subject)
				details += d.Detail + "\n"
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s\n-want +got:\n%s\n%s", tc.reason, d, details)
			}
			if !strings.Contains(details, tc.detail) {
				t.Errorf("%s\nno disagreement says %q:\n%s", tc.reason, tc.detail, details)
			}
		})
	}
}
