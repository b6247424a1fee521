// Package bench measures one full RunFunction of function-tenant-gateway
// (request decode, computation, response encode) at platform scale, against
// the floor any function pays: decoding the same request and returning the
// desired state it was given.
package bench

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-tenant-gateway/fn"
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
}

func (s Scale) String() string {
	out := fmt.Sprintf("mode=%s/routes=%d/namespaces=%d", s.Mode, s.Routes, s.Namespaces)
	if s.Admitted > 0 {
		out += fmt.Sprintf("/admitted=%d/scoped=%t", s.Admitted, s.Scoped)
	}
	return out
}

func (s Scale) admits(i int) bool { return s.Admitted == 0 || i < s.Admitted }

// route is a realistic HTTPRoute: one parentRef, one hostname, one rule with
// a backend, and the status its Gateway controller writes.
func route(gwns, ns, name, host string) string {
	return fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":%q,"namespace":%q,"uid":"6b1d1c3e-0d5e-4c1a-9a53-%012d","resourceVersion":"123456","generation":1,"creationTimestamp":"2026-11-01T00:00:00Z","labels":{"app.kubernetes.io/name":%q,"app.kubernetes.io/managed-by":"Helm"}},`+
		`"spec":{"parentRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"cozystack","namespace":%q}],"hostnames":[%q],`+
		`"rules":[{"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"backendRefs":[{"group":"","kind":"Service","name":%q,"port":8080,"weight":1}]}]},`+
		`"status":{"parents":[{"parentRef":{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"cozystack","namespace":"tenant-root"},"controllerName":"io.cilium/gateway-controller",`+
		`"conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"Accepted HTTPRoute","observedGeneration":1,"lastTransitionTime":"2026-11-01T00:00:00Z"},`+
		`{"type":"ResolvedRefs","status":"True","reason":"ResolvedRefs","message":"Service reference is valid","observedGeneration":1,"lastTransitionTime":"2026-11-01T00:00:00Z"}]}]}}`,
		name, ns, len(name)*1000+len(ns), name, gwns, host, name)
}

// Request builds the steady-state request of one TenantGateway: every
// requirement resolved, the composed resources observed as ours, so that the
// function composes in a single call, as it does on every reconcile after
// the first.
func Request(s Scale) ([]byte, error) {
	spec := `{"apex":"example.org"}`
	if s.Mode == "dns01" {
		spec = `{"apex":"example.org","certMode":"dns01","dns01":{"provider":"cloudflare","cloudflare":{"apiTokenSecretRef":{"name":"cf","key":"token"}}}}`
	}
	xr := resource.MustStructJSON(fmt.Sprintf(`{"apiVersion":"gateway.cozystack.io/v1alpha1","kind":"TenantGateway","metadata":{"name":"cozystack","namespace":"tenant-root","uid":"7f7586f8-b336-5a17-b4c5-11def6fef8dc"},"spec":%s}`, spec))

	required, err := routes(s)
	if err != nil {
		return nil, err
	}
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "bench"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}},
		RequiredResources: map[string]*fnv1.Resources{
			"tlsroutes":             {},
			"namespaces":            {Items: namespaces(s)},
			"namespace-tenant-root": {Items: []*fnv1.Resource{{Resource: resource.MustStructJSON(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tenant-root","labels":{"namespace.cozystack.io/gateway":"tenant-root"}}}`)}}},
			"gatewayclass":          {Items: []*fnv1.Resource{{Resource: resource.MustStructJSON(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass","metadata":{"name":"cilium"}}`)}}},
		},
		RequiredSchemas: map[string]*fnv1.Schema{
			"tlsroute-v1":       {OpenapiV3: resource.MustStructJSON(`{"type":"object"}`)},
			"tlsroute-v1alpha2": {},
		},
	}
	for k, v := range required {
		req.RequiredResources[k] = v
	}
	if err := steadyState(req); err != nil {
		return nil, err
	}
	return proto.Marshal(req)
}

// routes are the HTTPRoutes of the request, under the requirement names the
// function uses: cluster-wide, or per admitted namespace when scoped.
func routes(s Scale) (map[string]*fnv1.Resources, error) {
	required := map[string]*fnv1.Resources{}
	for i := 0; i < s.Routes; i++ {
		n := i % s.Namespaces
		ns := fmt.Sprintf("tenant-t%04d", n)
		gwns := "tenant-root"
		if !s.admits(n) {
			gwns = "tenant-other"
		}
		name := fmt.Sprintf("app%05d", i)
		r, err := structpb.NewStruct(nil)
		if err != nil {
			return nil, err
		}
		if err := r.UnmarshalJSON([]byte(route(gwns, ns, name, fmt.Sprintf("%s.t%04d.example.org", name, n)))); err != nil {
			return nil, err
		}
		key := "httproutes"
		if s.Scoped {
			if !s.admits(n) {
				continue // Not asked for.
			}
			key += "/" + ns
		}
		if required[key] == nil {
			required[key] = &fnv1.Resources{}
		}
		required[key].Items = append(required[key].Items, &fnv1.Resource{Resource: r})
	}
	return required, nil
}

// namespaces are those publishing through this Gateway, each with an apex.
func namespaces(s Scale) []*fnv1.Resource {
	var namespaces []*fnv1.Resource
	for i := 0; i < s.Namespaces; i++ {
		if !s.admits(i) {
			continue
		}
		namespaces = append(namespaces, &fnv1.Resource{Resource: resource.MustStructJSON(fmt.Sprintf(
			`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tenant-t%04d","labels":{"kubernetes.io/metadata.name":"tenant-t%04d","namespace.cozystack.io/gateway":"tenant-root","namespace.cozystack.io/host":"t%04d.example.org"}}}`, i, i, i))})
	}
	return namespaces
}

// steadyState makes the request what the function sees on every reconcile
// after the first: the composed resources observed as ours, so it composes
// in a single call without ownership probes.
func steadyState(req *fnv1.RunFunctionRequest) error {
	// A first run tells what the function composes; observing exactly that
	// makes the next run the steady state, with no ownership probes.
	rsp, err := fn.NewFunction().RunFunction(context.Background(), req)
	if err != nil {
		return err
	}
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return fmt.Errorf("fatal: %s", r.GetMessage())
		}
	}
	for name := range rsp.GetRequirements().GetResources() {
		if _, ok := req.RequiredResources[name]; !ok {
			req.RequiredResources[name] = &fnv1.Resources{}
		}
	}
	rsp, err = fn.NewFunction().RunFunction(context.Background(), req)
	if err != nil {
		return err
	}
	req.Observed.Resources = rsp.GetDesired().GetResources()
	return nil
}
