// Package bench measures one full RunFunction of function-tenant-gateway
// (request decode, computation, response encode) at platform scale, against
// the floor any function pays: decoding the same request and returning the
// desired state it was given.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-tenant-gateway/fn"
	"github.com/cozystack/function-tenant-gateway/test/fake"
)

// Scale is one benchmark case.
type Scale struct {
	Mode       string // http01 or dns01
	Routes     int
	Namespaces int
	// Admitted is how many of the namespaces publish through this
	// TenantGateway (0: all of them); the rest publish elsewhere.
	Admitted int
	// Scoped lists routes per admitted namespace, as the function asks when
	// it admits few; otherwise every route of the cluster is in the request.
	Scoped bool
	// Hostnames per route (0: one).
	Hostnames int
	// Contested makes every hostname claimed by two routes of two
	// namespaces that were both delegated the apex, with first labels of
	// 55 characters: the shape that once made the response grow past what
	// Crossplane accepts.
	Contested bool
}

func (s Scale) String() string {
	out := fmt.Sprintf("mode=%s/routes=%d/namespaces=%d", s.Mode, s.Routes, s.Namespaces)
	if s.Admitted > 0 {
		out += fmt.Sprintf("/admitted=%d/scoped=%t", s.Admitted, s.Scoped)
	}
	if s.Hostnames > 1 {
		out += fmt.Sprintf("/hostnames=%d", s.Hostnames)
	}
	if s.Contested {
		out += "/contested"
	}
	return out
}

// hostnames of route i in namespace n.
func (s Scale) hostnames(i, n int) []string {
	k := max(s.Hostnames, 1)
	out := make([]string, 0, k)
	for j := range k {
		switch {
		case s.Contested:
			// Routes 2m and 2m+1 (of two namespaces) claim the same names.
			out = append(out, fmt.Sprintf("%s%05d.example.org", strings.Repeat("l", 50), (i/2)*k+j))
		case k == 1:
			out = append(out, fmt.Sprintf("app%05d.t%04d.example.org", i, n))
		default:
			out = append(out, fmt.Sprintf("app%05d-%02d.t%04d.example.org", i, j, n))
		}
	}
	return out
}

func (s Scale) admits(i int) bool { return s.Admitted == 0 || i < s.Admitted }

// route is a realistic HTTPRoute: one parentRef, one hostname, one rule with
// a backend, and the status its Gateway controller writes.
func route(gwns, ns, name string, hosts []string) string {
	hj, err := json.Marshal(hosts)
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":%q,"namespace":%q,"uid":"6b1d1c3e-0d5e-4c1a-9a53-%012d","resourceVersion":"123456","generation":1,"creationTimestamp":"2026-11-01T00:00:00Z","labels":{"app.kubernetes.io/name":%q,"app.kubernetes.io/managed-by":"Helm"}},`+
		`"spec":{"parentRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"cozystack","namespace":%q}],"hostnames":%s,`+
		`"rules":[{"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"backendRefs":[{"group":"","kind":"Service","name":%q,"port":8080,"weight":1}]}]},`+
		`"status":{"parents":[{"parentRef":{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"cozystack","namespace":"tenant-root"},"controllerName":"io.cilium/gateway-controller",`+
		`"conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"Accepted HTTPRoute","observedGeneration":1,"lastTransitionTime":"2026-11-01T00:00:00Z"},`+
		`{"type":"ResolvedRefs","status":"True","reason":"ResolvedRefs","message":"Service reference is valid","observedGeneration":1,"lastTransitionTime":"2026-11-01T00:00:00Z"}]}]}}`,
		name, ns, len(name)*1000+len(ns), name, gwns, hj, name)
}

// Function is the function as a Scale runs it: Scoped false lists routes
// cluster-wide whatever the number of admitted namespaces, as the function
// did before it learnt to ask for less.
func Function(s Scale) *fn.Function {
	if s.Scoped {
		return fn.NewFunction()
	}
	return fn.NewFunction(fn.WithMaxScopedNamespaces(0))
}

// Request builds the steady-state request of one TenantGateway: the
// requirements resolved from a fake cluster through Crossplane's loop, and
// the composed resources observed as ours, as on every reconcile after the
// first, so that the function composes in a single call.
func Request(s Scale) ([]byte, error) {
	composite := xr(s)
	objects, err := cluster(s)
	if err != nil {
		return nil, err
	}
	c := fake.Cluster{Objects: objects, Served: map[string]bool{"gateway.networking.k8s.io/v1 TLSRoute": true}}
	f := Function(s)
	req := &fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: "bench"}, Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: composite}}}
	for range 2 {
		last, rsp, _, err := c.Run(context.Background(), f, req)
		if err != nil {
			return nil, err
		}
		for _, r := range rsp.GetResults() {
			if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
				return nil, fmt.Errorf("fatal: %s", r.GetMessage())
			}
		}
		// Observe what was composed; the second loop then settles without
		// ownership probes, as the steady state does.
		req = last
		req.Observed.Resources = rsp.GetDesired().GetResources()
	}
	return proto.Marshal(req)
}

// xr is the root tenant's TenantGateway of a Scale.
func xr(s Scale) *structpb.Struct {
	spec := `{"apex":"example.org"}`
	if s.Mode == "dns01" {
		spec = `{"apex":"example.org","certMode":"dns01","dns01":{"provider":"cloudflare","cloudflare":{"apiTokenSecretRef":{"name":"cf","key":"token"}}}}`
	}
	return resource.MustStructJSON(fmt.Sprintf(`{"apiVersion":"gateway.cozystack.io/v1alpha1","kind":"TenantGateway","metadata":{"name":"cozystack","namespace":"tenant-root","uid":"7f7586f8-b336-5a17-b4c5-11def6fef8dc"},"spec":%s}`, spec))
}

// cluster is every object of the fake cluster: the routes, the namespaces
// (those past Admitted publish through another Gateway), the GatewayClass.
func cluster(s Scale) ([]*structpb.Struct, error) {
	objects := []*structpb.Struct{
		resource.MustStructJSON(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tenant-root","labels":{"namespace.cozystack.io/gateway":"tenant-root"}}}`),
		resource.MustStructJSON(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass","metadata":{"name":"cilium"}}`),
	}
	for i := 0; i < s.Namespaces; i++ {
		gw := "tenant-root"
		if !s.admits(i) {
			gw = "tenant-other"
		}
		host := fmt.Sprintf("t%04d.example.org", i)
		if s.Contested {
			host = "example.org"
		}
		objects = append(objects, resource.MustStructJSON(fmt.Sprintf(
			`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tenant-t%04d","labels":{"kubernetes.io/metadata.name":"tenant-t%04d","namespace.cozystack.io/gateway":%q,"namespace.cozystack.io/host":%q}}}`, i, i, gw, host)))
	}
	for i := 0; i < s.Routes; i++ {
		n := i % s.Namespaces
		gw := "tenant-root"
		if !s.admits(n) {
			gw = "tenant-other"
		}
		name := fmt.Sprintf("app%05d", i)
		r, err := structpb.NewStruct(nil)
		if err != nil {
			return nil, err
		}
		if err := r.UnmarshalJSON([]byte(route(gw, fmt.Sprintf("tenant-t%04d", n), name, s.hostnames(i, n)))); err != nil {
			return nil, err
		}
		objects = append(objects, r)
	}
	return objects, nil
}
