package fn

import (
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-tenant-gateway/test/fake"
)

// shippedBootstrap reads the requirements the shipped Composition's step
// bootstraps.
func shippedBootstrap(t *testing.T) *fnv1.Requirements {
	t.Helper()
	b, err := os.ReadFile("../package/configuration/tenantgateway/composition.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := &xpv1.Composition{}
	if err := yaml.Unmarshal(b, c); err != nil {
		t.Fatal(err)
	}
	out := &fnv1.Requirements{Schemas: map[string]*fnv1.SchemaSelector{}}
	for _, s := range c.Spec.Pipeline[0].Requirements.RequiredSchemas {
		out.Schemas[s.RequirementName] = &fnv1.SchemaSelector{ApiVersion: s.APIVersion, Kind: s.Kind}
	}
	return out
}

// reconciler plays Crossplane v2.4's side across reconciles of one
// TenantGateway: each reconcile runs the step with the bootstrap and the
// resources the step required last time, then applies the desired state, so
// the next reconcile observes it (composed resources and the XR's status).
type reconciler struct {
	function  *Function // NewFunction() when nil
	cluster   fake.Cluster
	bootstrap *fnv1.Requirements
	previous  *fnv1.Requirements
	req       *fnv1.RunFunctionRequest
}

func (r *reconciler) reconcile(t *testing.T) int {
	t.Helper()
	f := r.function
	if f == nil {
		f = NewFunction()
	}
	_, rsp, calls, err := r.cluster.Reconcile(context.Background(), f, r.req, r.bootstrap, r.previous)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rsp.GetResults() {
		if res.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			t.Fatalf("fatal: %s", res.GetMessage())
		}
	}
	r.previous = rsp.GetRequirements()
	r.req = proto.Clone(r.req).(*fnv1.RunFunctionRequest) //nolint:forcetypeassert // Clone keeps the type.
	r.req.Observed.Resources = rsp.GetDesired().GetResources()
	if st, ok := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"]; ok {
		r.req.Observed.Composite.Resource.Fields["status"] = st
	}
	return calls
}

func TestCallsPerReconcile(t *testing.T) {
	route := func(name, host string) string {
		return `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"` + name + `","namespace":"tenant-root"},"spec":{"parentRefs":[{"name":"cozystack","namespace":"tenant-root"}],"hostnames":["` + host + `"]}}`
	}
	type calls struct{ Cold, Steady, NewHostname, AfterIt, RouteDeleted int }
	cases := map[string]struct {
		reason    string
		bootstrap func(t *testing.T) *fnv1.Requirements
		want      calls
	}{
		"ShippedComposition": {
			reason:    "With the TLSRoute schemas bootstrapped and the last reconcile's resources seeded, a reconcile that composes nothing new is one call; a new hostname costs one more, for the ownership probe of its Certificate",
			bootstrap: shippedBootstrap,
			want:      calls{Cold: 4, Steady: 1, NewHostname: 2, AfterIt: 1, RouteDeleted: 1},
		},
		"NoBootstrap": {
			reason:    "A Composition without the bootstrap still works: the function asks for the schemas itself, and routes wait for them on every reconcile",
			bootstrap: func(*testing.T) *fnv1.Requirements { return nil },
			want:      calls{Cold: 4, Steady: 3, NewHostname: 3, AfterIt: 3, RouteDeleted: 3},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &reconciler{
				cluster:   fake.Cluster{Served: v1TLSRoutes, Objects: objects(rootNamespace, route("a", "a.example.org"))},
				bootstrap: tc.bootstrap(t),
				req:       newRequest(t, `{"apex":"example.org"}`, nil, nil),
			}
			var got calls
			got.Cold = r.reconcile(t)
			got.Steady = r.reconcile(t)
			r.cluster.Objects = append(r.cluster.Objects, resource.MustStructJSON(route("b", "b.example.org")))
			got.NewHostname = r.reconcile(t)
			got.AfterIt = r.reconcile(t)
			r.cluster.Objects = r.cluster.Objects[:len(r.cluster.Objects)-1]
			got.RouteDeleted = r.reconcile(t)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if _, ok := r.req.GetObserved().GetResources()["certificate-https-b-"+hex8("b.example.org")]; ok {
				t.Errorf("the deleted route's Certificate is still composed")
			}
		})
	}
}

func objects(docs ...string) []*structpb.Struct {
	out := make([]*structpb.Struct, 0, len(docs))
	for _, d := range docs {
		out = append(out, resource.MustStructJSON(d))
	}
	return out
}
