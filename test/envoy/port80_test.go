package envoy

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	tgwv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/test/policies"
)

// TestAttackOwnerPort80 holds the rule that application routes never serve
// plain HTTP on port 80, judged by Envoy Gateway. The attacker is
// the administrator of the tenant that owns the Gateway (tenant-root, full
// rights on routes in its namespace); the Gateway's http listener admits
// that namespace for the redirect and cert-manager's challenges. Every
// route the attacker tries is first put through the shipped admission
// policies (examples/cluster/admission-policies.yaml) as that user, as the
// API server would; the ones admitted are composed by the function and
// translated. Whatever got through, port 80 must redirect each of the
// attacker's names to https, and a route that names port 443 is served
// there (docs/design.md, The owner on port 80).
func TestAttackOwnerPort80(t *testing.T) {
	egctl := Egctl(t)
	set, err := policies.Load(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	params, err := policies.Setting(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	owner := map[string]any{"metadata": map[string]any{"name": "tenant-root", "labels": map[string]any{
		kube.LabelNamespaceHost: "example.org", kube.LabelNamespaceGateway: "tenant-root",
	}}}
	attacker := map[string]any{"operation": "CREATE", "namespace": "tenant-root", "userInfo": map[string]any{
		"username": "root-admin@example.com", "groups": []any{"tenant-root-admins", "system:authenticated"},
	}}
	ref := func(section string, port int32) gateway.ParentRef {
		return gateway.ParentRef{Name: "cozystack", SectionName: section, Port: port}
	}
	tries := []gateway.Route{
		{Name: "plain", ParentRefs: []gateway.ParentRef{ref("", 0)}, Hostnames: []string{"plain.example.org"}},
		{Name: "named", ParentRefs: []gateway.ParentRef{ref(gateway.ListenerHTTP, 0)}, Hostnames: []string{"named.example.org"}},
		{Name: "port80", ParentRefs: []gateway.ParentRef{ref("", 80)}, Hostnames: []string{"port80.example.org"}},
		{Name: "both", ParentRefs: []gateway.ParentRef{ref("", 443), ref(gateway.ListenerHTTP, 0)}, Hostnames: []string{"both.example.org"}},
		{Name: "shop", ParentRefs: []gateway.ParentRef{ref("", 443)}, Hostnames: []string{"shop.example.org"}},
	}
	var admitted []gateway.Route
	var refused []string
	for _, r := range tries {
		r.Kind, r.Namespace = gateway.KindHTTPRoute, "tenant-root"
		refs := make([]any, 0, len(r.ParentRefs))
		for _, p := range r.ParentRefs {
			m := map[string]any{"name": p.Name}
			if p.SectionName != "" {
				m["sectionName"] = p.SectionName
			}
			if p.Port != 0 {
				m["port"] = int64(p.Port)
			}
			refs = append(refs, m)
		}
		hosts := make([]any, 0, len(r.Hostnames))
		for _, h := range r.Hostnames {
			hosts = append(hosts, h)
		}
		in := map[string]any{
			"object":          map[string]any{"metadata": map[string]any{"name": r.Name, "namespace": r.Namespace}, "spec": map[string]any{"parentRefs": refs, "hostnames": hosts}},
			"request":         attacker,
			"namespaceObject": owner,
			"params":          params,
		}
		msg, err := set.Review("gateway.networking.k8s.io", "v1", "httproutes", in)
		if err != nil {
			t.Fatal(err)
		}
		if msg != "" {
			refused = append(refused, r.Name)
			continue
		}
		admitted = append(admitted, r)
	}
	if diff := cmp.Diff([]string{"plain", "named", "port80", "both"}, refused); diff != "" {
		t.Errorf("routes the admission policies refuse the owner's administrator, -want +got:\n%s", diff)
	}
	spec := tgwv1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: tgwv1alpha1.CertModeHTTP01, IssuerName: "letsencrypt-prod"}
	_, s := composeScenario(t, gateway.Input{Spec: spec, Namespaces: []gateway.Namespace{tenantNS("tenant-root", "example.org")}, Routes: admitted})
	r, err := Translate(t.Context(), egctl, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range tries {
		for _, h := range tr.Hostnames {
			if err := r.RedirectsToHTTPS(h); err != nil {
				t.Errorf("port 80 serves the owner's %s in plain HTTP: %v", h, err)
			}
		}
	}
	if !slices.ContainsFunc(admitted, func(r gateway.Route) bool { return r.Name == "shop" }) {
		return
	}
	if b, err := r.Backends(portHTTPS, "shop.example.org"); err != nil || !slices.Equal(b, []string{"tenant-root/shop:80"}) {
		t.Errorf("https://shop.example.org/ (parentRef port 443) reaches %v (%v), want tenant-root/shop:80", b, err)
	}
}
