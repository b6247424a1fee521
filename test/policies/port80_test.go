package policies

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOwnerPort80: the attacker is the administrator of a tenant that owns
// a Gateway (full rights on routes in its namespace). The Gateway's port-80
// listener http admits its namespace for the redirect and cert-manager's
// challenges, so every parentRef it may write to a Gateway of its own
// namespace is one that cannot select http; Crossplane (the redirect),
// cert-manager's solver and administrators may; a parentRef to another
// namespace's Gateway, whose http listener does not admit this namespace, is
// not this policy's business. Every shipped policy that matches the write
// judges it, as on the API server.
func TestOwnerPort80(t *testing.T) {
	set, err := Load(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	params := setting(t, nil)
	owner := ns("tenant-alice", map[string]any{"namespace.cozystack.io/host": "alice.example.org", "namespace.cozystack.io/gateway": "tenant-alice"})
	tenant := req("CREATE", "tenant-alice", "alice@example.com", "system:authenticated", "tenant-alice-admins")
	u, g := sa("cozy-cert-manager", "cert-manager")
	certManager := req("CREATE", "tenant-alice", u, g...)
	u, g = sa("crossplane-system", "crossplane")
	crossplane := req("CREATE", "tenant-alice", u, g...)
	other := func() map[string]any {
		u, g := sa("crossplane-system", "function-foo")
		return req("CREATE", "tenant-alice", u, g...)
	}()
	admin := req("CREATE", "tenant-alice", "kubernetes-admin", "kubeadm:cluster-admins", "system:authenticated")
	route := func(refs ...map[string]any) map[string]any {
		rs := make([]any, 0, len(refs))
		for _, r := range refs {
			rs = append(rs, r)
		}
		return map[string]any{"spec": map[string]any{"hostnames": []any{"shop.alice.example.org"}, "parentRefs": rs}}
	}
	ref := func(kv ...any) map[string]any {
		r := map[string]any{"name": "cozystack"}
		for i := 0; i < len(kv); i += 2 {
			r[kv[i].(string)] = kv[i+1]
		}
		return r
	}
	const (
		http = "route-hostname-policy: HTTPRoute parentRefs to a Gateway in the route's own namespace must name a listener other than http (sectionName) or a port other than 80 (port: 443): that Gateway's port-80 listener http admits this namespace for its redirect to https and cert-manager's HTTP-01 challenges, and would serve the route in plain HTTP; only cluster administrators and the platform's service accounts may attach routes to it"
		grpc = "route-hostname-policy-grpc: GRPCRoute parentRefs to a Gateway in the route's own namespace must name a listener other than http (sectionName) or a port other than 80 (port: 443): that Gateway's port-80 listener http admits this namespace for its redirect to https and cert-manager's HTTP-01 challenges, and would serve the route in plain HTTP; only cluster administrators and the platform's service accounts may attach routes to it"
	)
	cases := map[string]struct {
		request map[string]any
		object  map[string]any
		want    string
	}{
		"NoSectionNoPort":        {tenant, route(ref()), http},
		"SectionHTTP":            {tenant, route(ref("sectionName", "http")), http},
		"SectionHTTPPort443":     {tenant, route(ref("sectionName", "http", "port", int64(443))), http},
		"Port80":                 {tenant, route(ref("port", int64(80))), http},
		"OwnNamespaceExplicit":   {tenant, route(ref("namespace", "tenant-alice")), http},
		"ExplicitGroupAndKind":   {tenant, route(ref("group", "gateway.networking.k8s.io", "kind", "Gateway")), http},
		"OneBadRefAmongGood":     {tenant, route(ref("port", int64(443)), ref()), http},
		"Port443":                {tenant, route(ref("port", int64(443))), ""},
		"SectionHTTPS":           {tenant, route(ref("sectionName", "https")), ""},
		"SectionHTTPSPort80":     {tenant, route(ref("sectionName", "https-apex", "port", int64(80))), ""},
		"ParentGatewayNamespace": {tenant, route(ref("namespace", "tenant-root")), ""},
		"NotAGateway":            {tenant, route(ref("kind", "Service", "group", "")), ""},
		"CertManagerSolver":      {certManager, route(ref("sectionName", "http")), ""},
		"CrossplaneRedirect":     {crossplane, route(ref("sectionName", "http")), ""},
		"Administrator":          {admin, route(ref()), ""},
		"AnotherCrossplaneSA":    {other, route(ref("sectionName", "http")), http},
		"UpdateNoSectionNoPort":  {req("UPDATE", "tenant-alice", "alice@example.com", "system:authenticated"), route(ref()), http},
		"NoParentRefs":           {tenant, map[string]any{"spec": map[string]any{"hostnames": []any{"shop.alice.example.org"}}}, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			for _, k := range []struct{ resource, want string }{{"httproutes", c.want}, {"grpcroutes", map[string]string{"": "", http: grpc}[c.want]}} {
				in := map[string]any{"object": c.object, "namespaceObject": owner, "request": c.request, "params": params}
				got, err := set.Review("gateway.networking.k8s.io", "v1", k.resource, in)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(k.want, got); diff != "" {
					t.Errorf("%s: -want, +got:\n%s", k.resource, diff)
				}
			}
		})
	}
}
