package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	kobjv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/object/v1alpha1"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// A view is what an operator notices of an Output, one line per item.
type view struct {
	Listeners    []string
	Certificates []string
	Hostnames    []string
	Conflicts    []string
	Children     []string
	Keys         []string
}

func viewOf(t *testing.T, out *Output) view {
	t.Helper()
	var v view
	for _, r := range out.Resources {
		v.Keys = append(v.Keys, r.Key)
		switch o := r.Object.(type) {
		case *gwapiv1.Gateway:
			for _, l := range o.Spec.Listeners {
				v.Listeners = append(v.Listeners, listenerLine(l))
			}
		case *cmv1.Certificate:
			v.Certificates = append(v.Certificates, fmt.Sprintf("%s secret=%s %s", o.Name, o.Spec.SecretName, strings.Join(o.Spec.DNSNames, ",")))
		}
	}
	for _, h := range out.Hostnames {
		v.Hostnames = append(v.Hostnames, fmt.Sprintf("%s %s %s", h.Hostname, h.Route, h.State))
	}
	for _, c := range out.Conflicts {
		v.Conflicts = append(v.Conflicts, fmt.Sprintf("%s winner=%s losers=%s", c.Hostname, c.Winner, strings.Join(c.Losers, ",")))
	}
	for _, c := range out.ChildApexes {
		v.Children = append(v.Children, fmt.Sprintf("%s %s %s", c.Apex, c.Namespace, c.State))
	}
	return v
}

// listenerLine is "name port/protocol hostname selector [kinds] [cert]".
func listenerLine(l gwapiv1.Listener) string {
	parts := []string{string(l.Name), fmt.Sprintf("%d/%s", l.Port, l.Protocol)}
	if l.Hostname != nil {
		parts = append(parts, string(*l.Hostname))
	}
	if a := l.AllowedRoutes; a != nil && a.Namespaces != nil && a.Namespaces.Selector != nil {
		parts = append(parts, selectorText(a.Namespaces.Selector)...)
		if len(a.Kinds) > 0 {
			var k []string
			for _, rk := range a.Kinds {
				k = append(k, string(rk.Kind))
			}
			parts = append(parts, "kinds="+strings.Join(k, ","))
		}
	}
	if l.TLS != nil {
		if len(l.TLS.CertificateRefs) > 0 {
			parts = append(parts, "cert="+string(l.TLS.CertificateRefs[0].Name))
		} else {
			parts = append(parts, string(*l.TLS.Mode))
		}
	}
	return strings.Join(parts, " ")
}

// selectorText is a namespace selector in short: in=<names> (SEL-HTTP),
// label=<gateway ns>, pin=<ns> (with the gateway label), host=<apex>,
// names=<namespaces>.
func selectorText(s *metav1.LabelSelector) []string {
	var parts []string
	switch {
	case s.MatchLabels[kube.LabelNamespaceName] != "":
		parts = append(parts, "pin="+s.MatchLabels[kube.LabelNamespaceName])
	case s.MatchLabels[kube.LabelNamespaceGateway] != "":
		parts = append(parts, "label="+s.MatchLabels[kube.LabelNamespaceGateway])
	}
	if h := s.MatchLabels[kube.LabelNamespaceHost]; h != "" {
		parts = append(parts, "host="+h)
	}
	for _, e := range s.MatchExpressions {
		v := strings.Join(e.Values, ",")
		switch {
		case e.Key == kube.LabelNamespaceName && len(s.MatchLabels) == 0:
			parts = append(parts, "in="+v)
		case e.Key == kube.LabelNamespaceName:
			parts = append(parts, "names="+v)
		case e.Key == kube.LabelNamespaceHost && e.Operator == metav1.LabelSelectorOpNotIn:
			parts = append(parts, "host-notin="+v)
		default:
			parts = append(parts, fmt.Sprintf("%s-%s=%s", e.Key, e.Operator, v))
		}
	}
	return parts
}

// routeTo builds an HTTPRoute on the cozystack Gateway in tenant-root.
func routeTo(ns, name string, hosts ...string) Route {
	ref := ParentRef{Name: "cozystack"}
	if ns != "tenant-root" {
		ref.Namespace = "tenant-root"
	}
	return Route{Kind: KindHTTPRoute, Namespace: ns, Name: name, ParentRefs: []ParentRef{ref}, Hostnames: hosts}
}

// labelled is a namespace publishing through tenant-root, with an apex.
func labelled(name, host string) Namespace {
	l := map[string]string{kube.LabelNamespaceGateway: "tenant-root"}
	if host != "" {
		l[kube.LabelNamespaceHost] = host
	}
	return Namespace{Name: name, Labels: l}
}

// manifestBytes is the JSON of an Object's manifest, as provider-kubernetes
// receives it.
func manifestBytes(t testing.TB, o *kobjv1alpha1.Object) []byte {
	t.Helper()
	b, err := json.Marshal(o.Spec.ForProvider.Manifest)
	if err != nil {
		t.Fatalf("cannot encode the manifest of Object %s: %v", o.Name, err)
	}
	return bytes.TrimSpace(b)
}

// manifestOf is the JSON manifest of a namespace patch.
func manifestOf(t *testing.T, r kube.Resource) string {
	t.Helper()
	o, ok := r.Object.(*kobjv1alpha1.Object)
	if !ok {
		t.Fatalf("%s is a %T, not a provider-kubernetes Object", r.Key, r.Object)
	}
	if diff := cmp.Diff(xpv2.ManagementPolicies{"Observe", "Update"}, o.Spec.ManagementPolicies); diff != "" {
		t.Errorf("%s managementPolicies: -want, +got:\n%s", r.Key, diff)
	}
	return string(manifestBytes(t, o))
}

const (
	selHTTP = "in=tenant-root,cozy-cert-manager"
	// Route kinds where the class is not Cilium's (or not observed): what
	// each protocol serves.
	k443     = "kinds=HTTPRoute"
	kTLS     = "kinds=TLSRoute"
	httpLine = "http 80/HTTP " + selHTTP
)

// compose composes tenant-root's Gateway; served are hostnames whose http01
// listener is on the observed Gateway.
func compose(t *testing.T, spec v1alpha1.TenantGatewaySpec, routes []Route, nss []Namespace, served ...string) view {
	t.Helper()
	var obs map[string]*kube.ObservedResource
	if len(served) > 0 {
		gw := &kube.ObservedResource{ListenerHostnames: map[string]string{}}
		for _, h := range served {
			gw.ListenerNames = append(gw.ListenerNames, HostListenerName(h))
			gw.ListenerHostnames[HostListenerName(h)] = h
		}
		obs = map[string]*kube.ObservedResource{KeyGateway: gw}
	}
	// The edge looks up the owner and attached namespaces by name.
	named := map[string]*Namespace{}
	for i := range nss {
		named[nss[i].Name] = &nss[i]
	}
	out, err := Compose(Input{Name: "cozystack", Namespace: "tenant-root", CertManagerNamespace: "cozy-cert-manager", Spec: spec, Routes: routes, Namespaces: nss, NamedNamespaces: named, Observed: obs})
	if err != nil {
		t.Fatalf("Compose: %v", err)
	}
	return viewOf(t, out)
}
