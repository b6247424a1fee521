package fn

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

func TestMalformedRoutesAreSkipped(t *testing.T) {
	c := fakeCluster{served: v1TLSRoutes, objects: []string{
		`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"bad","namespace":"tenant-root"},"spec":{"parentRefs":[{"name":"cozystack"}],"hostnames":"a.example.org"}}`,
		`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"odd","namespace":"tenant-root"},"spec":{"parentRefs":[{"name":"cozystack"}],"hostnames":[7]}}`,
		`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"good","namespace":"tenant-root"},"spec":{"parentRefs":[{"name":"cozystack"}],"hostnames":["b.example.org"]}}`,
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tenant-x","labels":{"namespace.cozystack.io/gateway":"tenant-root","namespace.cozystack.io/host":7}}}`,
	}}
	rsp, _ := c.run(t, NewFunction(), newRequest(t, `{"apex":"example.org"}`, nil, nil))
	var got []string
	for _, r := range rsp.GetResults() {
		got = append(got, r.GetSeverity().String()+": "+r.GetMessage())
	}
	want := []string{
		`SEVERITY_WARNING: skipping 3 malformed routes and namespaces: HTTPRoute tenant-root/bad: spec.hostnames is not a list; HTTPRoute tenant-root/odd: spec.hostnames[0] is not a string; Namespace "tenant-x": label "namespace.cozystack.io/host" is not a string`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results: -want, +got:\n%s", diff)
	}
	if _, ok := rsp.GetDesired().GetResources()["certificate-https-b-"+gateway.Hex8("b.example.org")]; !ok {
		t.Errorf("the well-formed route's hostname got no Certificate; desired: %v", slices.Sorted(maps.Keys(rsp.GetDesired().GetResources())))
	}
}
