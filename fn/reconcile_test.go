package fn

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
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
	r, err := fake.Bootstrap(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// reconciler plays Crossplane v2.4's side across reconciles of one
// TenantGateway (see fake.Reconciler), failing the test on a Fatal result.
type reconciler struct {
	function *Function // NewFunction() when nil
	fake.Reconciler
}

func (r *reconciler) reconcile(t *testing.T) int {
	t.Helper()
	calls, _ := r.reconcileState(t)
	return calls
}

// reconcileState is reconcile that also returns the desired state.
func (r *reconciler) reconcileState(t *testing.T) (int, *fnv1.State) {
	t.Helper()
	f := r.function
	if f == nil {
		f = NewFunction()
	}
	rsp, calls, err := r.Reconcile(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rsp.GetResults() {
		if res.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			t.Fatalf("fatal: %s", res.GetMessage())
		}
	}
	return calls, rsp.GetDesired()
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
			r := &reconciler{Reconciler: fake.Reconciler{
				Cluster:   fake.Cluster{Served: v1TLSRoutes, Objects: objects(rootNamespace, route("a", "a.example.org"))},
				Bootstrap: tc.bootstrap(t),
				Request:   newRequest(t, `{"apex":"example.org"}`, nil, nil),
			}}
			var got calls
			got.Cold = r.reconcile(t)
			got.Steady = r.reconcile(t)
			r.Cluster.Objects = append(r.Cluster.Objects, resource.MustStructJSON(route("b", "b.example.org")))
			var changed, after *fnv1.State
			got.NewHostname, changed = r.reconcileState(t)
			got.AfterIt, after = r.reconcileState(t)
			if !proto.Equal(changed, after) {
				// Crossplane would write, and its own events re-run the XR.
				t.Errorf("the reconcile after the change, observing what it applied, composed another desired state:\nchange: %v\nafter:  %v", changed, after)
			}
			r.Cluster.Objects = slices.DeleteFunc(r.Cluster.Objects, func(o *structpb.Struct) bool {
				return o.GetFields()["kind"].GetStringValue() == gateway.KindHTTPRoute && o.GetFields()["metadata"].GetStructValue().GetFields()["name"].GetStringValue() == "b"
			})
			got.RouteDeleted = r.reconcile(t)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if _, ok := r.Request.GetObserved().GetResources()["certificate-https-b-"+gateway.Hex8("b.example.org")]; ok {
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
