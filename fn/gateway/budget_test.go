package gateway

import (
	"fmt"
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

func hosts(n int, format string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

func count(lines []string, suffix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasSuffix(l, suffix) {
			n++
		}
	}
	return n
}

func TestListenerBudgetHTTP01(t *testing.T) {
	routes := []Route{routeTo("tenant-root", "apps", hosts(70, "app%02d.example.org")...)}
	svc := []v1alpha1.DNSLabel{"api", "vm-exportproxy", "cdi-uploadproxy"}
	spec := v1alpha1.TenantGatewaySpec{Apex: "example.org", TLSPassthroughServices: svc}

	t.Run("NewHostnamesInOrder", func(t *testing.T) {
		got := compose(t, spec, routes, nil)
		if n := len(got.Listeners); n != MaxListeners {
			t.Errorf("listeners: got %d, want %d", n, MaxListeners)
		}
		// http + 3 passthrough leave 60: app00..app59 listen, app60..app69 are left out.
		if n := count(got.Hostnames, "Listening"); n != 60 {
			t.Errorf("Listening hostnames: got %d, want 60", n)
		}
		if diff := cmp.Diff("app60.example.org HTTPRoute/tenant-root/apps OverListenerLimit", got.Hostnames[60]); diff != "" {
			t.Errorf("first hostname left out: -want, +got:\n%s", diff)
		}
		if !strings.HasPrefix(got.Listeners[61], "tls-api ") || !strings.HasPrefix(got.Listeners[63], "tls-cdi-uploadproxy ") {
			t.Errorf("passthrough listeners are not kept last in spec order: %v", got.Listeners[60:])
		}
	})
	t.Run("ServedHostnamesKeepTheirListeners", func(t *testing.T) {
		got := compose(t, spec, routes, nil, "app65.example.org", "app69.example.org")
		for _, h := range []string{"app65.example.org", "app69.example.org"} {
			want := h + " HTTPRoute/tenant-root/apps Listening"
			if !slices.Contains(got.Hostnames, want) {
				t.Errorf("%s was on the observed Gateway but lost its listener", h)
			}
		}
		if !slices.Contains(got.Hostnames, "app58.example.org HTTPRoute/tenant-root/apps OverListenerLimit") {
			t.Errorf("a new hostname should give way to the served ones: app58 should be left out")
		}
	})
}

func TestListenerBudgetDNS01Children(t *testing.T) {
	var nss []Namespace
	for i := 0; i < 70; i++ {
		nss = append(nss, labelled(fmt.Sprintf("tenant-c%02d", i), fmt.Sprintf("c%02d.example.org", i)))
	}
	spec := v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, DNS01: &v1alpha1.DNS01{Cloudflare: &v1alpha1.CloudflareProvider{APITokenSecretRef: v1alpha1.SecretKeySelector{Name: "cf", Key: "t"}}}}
	// Every child routes a name: an idle zone holds no certificate name.
	var routes []Route
	for i := 0; i < 70; i++ {
		routes = append(routes, routeTo(fmt.Sprintf("tenant-c%02d", i), "x", fmt.Sprintf("x.c%02d.example.org", i)))
	}
	got := compose(t, spec, routes, nss)
	// The certificate holds 100 names: apex, *.apex and 49 children.
	if n := count(got.Children, "Listening"); n != 49 {
		t.Errorf("listening children: got %d, want 49 (the CA's 100-name limit)", n)
	}
	if n := strings.Count(got.Certificates[0], ",") + 1; n != 100 {
		t.Errorf("wildcard certificate names: got %d, want 100", n)
	}
	if len(got.Listeners) != 3+49 {
		t.Errorf("listeners: got %d, want http, https, https-apex and 49 children", len(got.Listeners))
	}
	if n := count(got.Children, "OverCertificateLimit"); n != 21 {
		t.Errorf("children left out of the certificate: got %d, want 21", n)
	}
	if !slices.Contains(got.Hostnames, "x.c60.example.org HTTPRoute/tenant-c60/x OverCertificateLimit") {
		t.Errorf("a hostname under a left-out child apex is not OverCertificateLimit: %v", got.Hostnames)
	}
}

// TestProperties composes random sets of routes and namespaces and checks
// what must hold for any input: at most 64 listeners, unique listener names,
// unique port/protocol/hostname, names within the SectionName pattern, and
// output that does not depend on the order of the input lists.
func TestProperties(t *testing.T) {
	sectionName := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	modes := []v1alpha1.TenantGatewaySpec{
		{Apex: "example.org", TLSPassthroughServices: []v1alpha1.DNSLabel{"api"}},
		{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, DNS01: &v1alpha1.DNS01{Cloudflare: &v1alpha1.CloudflareProvider{APITokenSecretRef: v1alpha1.SecretKeySelector{Name: "cf", Key: "t"}}}},
		{Apex: "example.org", CertMode: v1alpha1.CertModeExistingSecret, WildcardSecretRef: &v1alpha1.LocalSecretReference{Name: "w"}},
		{Apex: "example.org", CertMode: v1alpha1.CertModeEdge},
	}
	labels := []string{"a", "b", "api", "www", "harbor", "x-y", "*", "UPPER", "n0", "c1", "c2"}
	domains := []string{"example.org", "c1.example.org", "c2.example.org", "other.net", "deep.c1.example.org"}
	namespaces := []string{"tenant-root", "cozy-a", "cozy-b", "tenant-c1", "tenant-c2", "tenant-x", "tenant-c1-deep"}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		var routes []Route
		for r := rng.Intn(120); r > 0; r-- {
			var hs []string
			for h := rng.Intn(4); h > 0; h-- {
				l, n, d := labels[rng.Intn(len(labels))], rng.Intn(30), domains[rng.Intn(len(domains))]
				if l == "*" && n%2 == 0 {
					// A wildcard, reaching into tenant-c1-deep's zone
					// from c1 or the apex when d is deep.c1.
					hs = append(hs, "*."+d)
					continue
				}
				hs = append(hs, l+fmt.Sprint(n)+"."+d)
			}
			routes = append(routes, routeTo(namespaces[rng.Intn(len(namespaces))], fmt.Sprintf("r%d", r), hs...))
		}
		// The pairs whose short names collide, from other namespaces.
		routes = append(routes,
			routeTo("tenant-c1", "collide", "www.n21218.alice.example.org", "harbor.bob.example.org"),
			routeTo("tenant-x", "collide", "www.n29916.alice.example.org", "harbor.x19ul5zj.alice.example.org"))
		nss := []Namespace{
			labelled("tenant-c1", "c1.example.org"), labelled("tenant-c2", "c2.example.org"), labelled("cozy-a", ""), labelled("cozy-b", ""),
			labelled("tenant-c1-deep", "deep.c1.example.org"), labelled("tenant-x", "example.org"), labelled("tenant-root", "example.org"),
			labelled("tenant-alice", "alice.example.org"), labelled("tenant-bob", "bob.example.org"),
			{Name: "tenant-eve", Labels: map[string]string{kube.LabelNamespaceGateway: "tenant-other", kube.LabelNamespaceHost: "example.org"}},
		}
		attached := []v1alpha1.DNSLabel{"cozy-a", "tenant-eve"}[:rng.Intn(3)]
		for _, spec := range modes {
			spec.AttachedNamespaces = attached
			in := Input{Name: "cozystack", Namespace: "tenant-root", CertManagerNamespace: "cozy-cert-manager", Spec: spec, Routes: routes, Namespaces: nss}
			in.NamedNamespaces = map[string]*Namespace{}
			for i := range nss {
				in.NamedNamespaces[nss[i].Name] = &nss[i]
			}
			out, err := Compose(in)
			if err != nil {
				t.Fatal(err)
			}
			checkIsolation(t, &in, out)
			checkServed(t, &in, out)
			checkTables(t, &in, out, false)
			checkTables(t, &in, out, true)
			v := viewOf(t, out)
			if len(v.Listeners) > MaxListeners {
				t.Fatalf("case %d %s: %d listeners", i, spec.CertMode, len(v.Listeners))
			}
			names, slots := map[string]bool{}, map[string]bool{}
			for _, l := range v.Listeners {
				f := strings.Fields(l)
				slot := f[1]
				if len(f) > 2 && !strings.Contains(f[2], "=") {
					slot += " " + f[2]
				}
				if names[f[0]] || slots[slot] {
					t.Fatalf("case %d %s: duplicate listener %q", i, spec.CertMode, l)
				}
				names[f[0]], slots[slot] = true, true
				if len(f[0]) > maxListenerName || !sectionName.MatchString(f[0]) {
					t.Fatalf("case %d %s: listener name %q is not a SectionName", i, spec.CertMode, f[0])
				}
			}

			shuffled := in
			shuffled.Routes = append([]Route(nil), routes...)
			rng.Shuffle(len(shuffled.Routes), func(a, b int) { shuffled.Routes[a], shuffled.Routes[b] = shuffled.Routes[b], shuffled.Routes[a] })
			shuffled.Namespaces = append([]Namespace(nil), nss...)
			rng.Shuffle(len(shuffled.Namespaces), func(a, b int) {
				shuffled.Namespaces[a], shuffled.Namespaces[b] = shuffled.Namespaces[b], shuffled.Namespaces[a]
			})
			again, err := Compose(shuffled)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(out, again, cmpopts.IgnoreUnexported(Output{})); diff != "" {
				t.Fatalf("case %d %s: output depends on input order:\n%s", i, spec.CertMode, diff)
			}
		}
	}
}
