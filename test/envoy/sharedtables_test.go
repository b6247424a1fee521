package envoy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	kobjv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/object/v1alpha1"

	tgwv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// Attacks on tables the implementation shares, judged by Envoy Gateway's
// own translator: the function composes, the translator answers with the
// xDS it would send, and the test reads the route tables and where a
// request goes; EGCTL names the translator, as for every test of this
// package.

func tenantNS(name, host string) gateway.Namespace {
	l := map[string]string{kube.LabelNamespaceGateway: "tenant-root"}
	if host != "" {
		l[kube.LabelNamespaceHost] = host
	}
	return gateway.Namespace{Name: name, Labels: l}
}

func tenantRoute(ns, name string, hosts ...string) gateway.Route {
	ref := gateway.ParentRef{Name: "cozystack"}
	if ns != "tenant-root" {
		ref.Namespace = "tenant-root"
	}
	return gateway.Route{Kind: gateway.KindHTTPRoute, Namespace: ns, Name: name, ParentRefs: []gateway.ParentRef{ref}, Hostnames: hosts}
}

// composeScenario composes tenant-root's Gateway and builds the Scenario the
// translator judges: every route with a backend Service named after it.
func composeScenario(t *testing.T, in gateway.Input) (*gateway.Output, *Scenario) {
	t.Helper()
	in.Name, in.Namespace, in.UID, in.CertManagerNamespace = "cozystack", "tenant-root", "u", "cozy-cert-manager"
	in.NamedNamespaces = map[string]*gateway.Namespace{}
	for i := range in.Namespaces {
		in.NamedNamespaces[in.Namespaces[i].Name] = &in.Namespaces[i]
	}
	out, err := gateway.Compose(in)
	if err != nil {
		t.Fatal(err)
	}
	s := &Scenario{}
	for _, r := range out.Resources {
		switch o := r.Object.(type) {
		case *gwapiv1.Gateway:
			s.Gateway = *o
		case *gwapiv1.HTTPRoute:
			// The redirect to https, on the http listener.
			s.HTTPRoutes = append(s.HTTPRoutes, *o)
		case *kobjv1alpha1.Object:
			// A zone guard, written into a child's namespace.
			var r gwapiv1.HTTPRoute
			b, err := json.Marshal(o.Spec.ForProvider.Manifest)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			if r.Kind == "HTTPRoute" {
				s.HTTPRoutes = append(s.HTTPRoutes, r)
			}
		}
	}
	attached := map[string]bool{in.Namespace: true}
	for _, a := range in.Spec.AttachedNamespaces {
		attached[string(a)] = true
	}
	for _, n := range in.Namespaces {
		l := map[string]string{}
		for k, v := range n.Labels {
			l[k] = v
		}
		if attached[n.Name] {
			l[kube.LabelNamespaceGateway] = in.Namespace
		}
		s.Namespaces = append(s.Namespaces, corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: l}})
	}
	for _, r := range in.Routes {
		var refs []gwapiv1.ParentReference
		for _, p := range r.ParentRefs {
			ref := gwapiv1.ParentReference{Name: gwapiv1.ObjectName(p.Name)}
			if p.Namespace != "" {
				ns := gwapiv1.Namespace(p.Namespace)
				ref.Namespace = &ns
			}
			if p.SectionName != "" {
				sn := gwapiv1.SectionName(p.SectionName)
				ref.SectionName = &sn
			}
			if p.Port != 0 {
				port := p.Port
				ref.Port = &port
			}
			refs = append(refs, ref)
		}
		var hosts []gwapiv1.Hostname
		for _, h := range r.Hostnames {
			hosts = append(hosts, gwapiv1.Hostname(h))
		}
		port := gwapiv1.PortNumber(80)
		backend := gwapiv1.BackendRef{BackendObjectReference: gwapiv1.BackendObjectReference{Name: gwapiv1.ObjectName(r.Name), Port: &port}}
		s.HTTPRoutes = append(s.HTTPRoutes, gwapiv1.HTTPRoute{
			TypeMeta:   metav1.TypeMeta{APIVersion: gwapiv1.GroupVersion.String(), Kind: kindHTTPRoute},
			ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name},
			Spec: gwapiv1.HTTPRouteSpec{
				CommonRouteSpec: gwapiv1.CommonRouteSpec{ParentRefs: refs},
				Hostnames:       hosts,
				Rules:           []gwapiv1.HTTPRouteRule{{BackendRefs: []gwapiv1.HTTPBackendRef{{BackendRef: backend}}}},
			},
		})
	}
	return out, s
}

func translateScenario(t *testing.T, s *Scenario) *Result {
	t.Helper()
	r, err := Translate(context.Background(), Egctl(t), s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// duplicateDomains are the domains a route table lists in two virtual
// hosts.
func duplicateDomains(r *Result) []string {
	var out []string
	for _, rc := range r.XDS.RouteConfigs {
		first := map[string]string{}
		for _, vh := range rc.VirtualHosts {
			for _, d := range vh.Domains {
				if other, dup := first[d]; dup {
					out = append(out, fmt.Sprintf("%s: %s in %s and %s", rc.Name, d, other, vh.Name))
				}
				first[d] = vh.Name
			}
		}
	}
	return out
}

// TestAttackEnvoyPublisherWildcardPin: a wildcard pin and the
// apex's wildcard both list the winner's name under the pin.
func TestAttackEnvoyPublisherWildcardPin(t *testing.T) {
	spec := tgwv1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: tgwv1alpha1.CertModeEdge, AttachedNamespaces: []tgwv1alpha1.DNSLabel{"cozy-dashboard"}}
	_, s := composeScenario(t, gateway.Input{Spec: spec, Namespaces: []gateway.Namespace{tenantNS("tenant-root", "example.org"), tenantNS("cozy-dashboard", "")}, Routes: []gateway.Route{
		tenantRoute("tenant-root", "apps", "*.apps.example.org"),
		tenantRoute("cozy-dashboard", "apps", "*.apps.example.org"),
		tenantRoute("cozy-dashboard", "a", "a.apps.example.org"),
	}})
	r := translateScenario(t, s)
	if d := duplicateDomains(r); len(d) > 0 {
		t.Errorf("Envoy would refuse the port-80 route table: %s", strings.Join(d, "; "))
	}
}

// TestAttackEnvoyParentCatchAll: on an edge Gateway a request
// for a name of bob's zone his routes do not list went to alice's wildcard;
// bob's zone guard now lists *.bob.alice.example.org under his listener.
func TestAttackEnvoyParentCatchAll(t *testing.T) {
	spec := tgwv1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: tgwv1alpha1.CertModeEdge}
	_, s := composeScenario(t, gateway.Input{Spec: spec, Namespaces: []gateway.Namespace{
		tenantNS("tenant-root", "example.org"), tenantNS("tenant-alice", "alice.example.org"), tenantNS("tenant-alice-bob", "bob.alice.example.org"),
	}, Routes: []gateway.Route{
		tenantRoute("tenant-alice", "phish", "*.alice.example.org"),
		tenantRoute("tenant-alice-bob", "www", "www.bob.alice.example.org"),
	}})
	r := translateScenario(t, s)
	if b, err := r.Backends(80, "login.bob.alice.example.org"); err == nil {
		t.Errorf("login.bob.alice.example.org, in bob's zone, goes to %v", b)
	}
	if b, err := r.Backends(80, "www.bob.alice.example.org"); err != nil || len(b) != 1 || b[0] != "tenant-alice-bob/www:80" {
		t.Errorf("www.bob.alice.example.org goes to %v (%v)", b, err)
	}
}

// TestAttackEnvoyDroppedPinServed: the owner's name whose pin
// the full budget left out is answered on an edge Gateway by edge, though
// status says OverListenerLimit.
func TestAttackEnvoyDroppedPinServed(t *testing.T) {
	spec := tgwv1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: tgwv1alpha1.CertModeEdge}
	nss := []gateway.Namespace{tenantNS("tenant-root", "example.org"), tenantNS("tenant-alice", "alice.example.org")}
	routes := []gateway.Route{tenantRoute("tenant-alice", "www", "www.alice.example.org")}
	for i := range gateway.MaxListeners - 3 {
		ns := fmt.Sprintf("tenant-f%02d", i)
		nss = append(nss, tenantNS(ns, fmt.Sprintf("f%02d.example.org", i)))
		routes = append(routes, tenantRoute(ns, "www", fmt.Sprintf("www.f%02d.example.org", i)))
	}
	first, _ := composeScenario(t, gateway.Input{Spec: spec, Namespaces: nss, Routes: routes})
	obs := &kube.ObservedResource{ListenerHostnames: map[string]string{}}
	for _, r := range first.Resources {
		if gw, ok := r.Object.(*gwapiv1.Gateway); ok {
			for _, l := range gw.Spec.Listeners {
				obs.ListenerNames = append(obs.ListenerNames, string(l.Name))
				if l.Hostname != nil {
					obs.ListenerHostnames[string(l.Name)] = string(*l.Hostname)
				}
			}
		}
	}
	out, s := composeScenario(t, gateway.Input{Spec: spec, Namespaces: nss, Routes: append(routes, tenantRoute("tenant-root", "shop", "shop.alice.example.org")),
		Observed: map[string]*kube.ObservedResource{gateway.KeyGateway: obs}})
	state := ""
	for _, h := range out.Hostnames {
		if h.Route == "HTTPRoute/tenant-root/shop" {
			state = string(h.State)
		}
	}
	r := translateScenario(t, s)
	if b, err := r.Backends(80, "shop.alice.example.org"); err == nil && state != string(tgwv1alpha1.HostnameCovered) {
		t.Errorf("shop.alice.example.org goes to %v, but status says %s", b, state)
	}
}
