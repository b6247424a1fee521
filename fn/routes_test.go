package fn

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

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
	// A fresh TenantGateway orders no Certificate before its record of the
	// order ledger is written: the well-formed route's hostname is read,
	// and waits for that.
	var hostnames []string
	for _, h := range rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)["hostnames"].([]any) {
		hostnames = append(hostnames, h.(map[string]any)["hostname"].(string))
	}
	if !slices.Contains(hostnames, "b.example.org") {
		t.Errorf("the well-formed route's hostname is not in status.hostnames: %v; desired: %v", hostnames, slices.Sorted(maps.Keys(rsp.GetDesired().GetResources())))
	}
}

// TestDecodeRouteFields: both decoders (Structs, and the bytes the codec
// keeps) read what the rules need: cert-manager's solver label, and a
// parentRef group given as "" (the core group, no Gateway's) apart from an
// unset one (the Gateway API's, as the API server defaults it).
func TestDecodeRouteFields(t *testing.T) {
	cases := map[string]struct {
		json string
		want gateway.Route
	}{
		"SolverLabel": {
			json: `{"metadata":{"name":"cm-acme-http-solver-x","namespace":"tenant-root","labels":{"acme.cert-manager.io/http01-solver":"true"}},"spec":{"parentRefs":[{"name":"cozystack","sectionName":"http"}],"hostnames":["a.example.org"]}}`,
			want: gateway.Route{Kind: gateway.KindHTTPRoute, Namespace: "tenant-root", Name: "cm-acme-http-solver-x", Solver: true, Hostnames: []string{"a.example.org"},
				ParentRefs: []gateway.ParentRef{{Name: "cozystack", SectionName: "http"}}},
		},
		"OtherLabels": {
			json: `{"metadata":{"name":"r","namespace":"tenant-root","labels":{"acme.cert-manager.io/http01-solver":"false","app":"x"}},"spec":{"parentRefs":[{"name":"cozystack"}]}}`,
			want: gateway.Route{Kind: gateway.KindHTTPRoute, Namespace: "tenant-root", Name: "r", ParentRefs: []gateway.ParentRef{{Name: "cozystack"}}},
		},
		"CoreGroup": {
			json: `{"metadata":{"name":"r","namespace":"tenant-root"},"spec":{"parentRefs":[{"group":"","name":"cozystack"},{"group":"gateway.networking.k8s.io","name":"cozystack"},{"name":"cozystack"}]}}`,
			want: gateway.Route{Kind: gateway.KindHTTPRoute, Namespace: "tenant-root", Name: "r", ParentRefs: []gateway.ParentRef{
				{CoreGroup: true, Name: "cozystack"}, {Group: "gateway.networking.k8s.io", Name: "cozystack"}, {Name: "cozystack"},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &structpb.Struct{}
			if err := protojson.Unmarshal([]byte(tc.json), s); err != nil {
				t.Fatal(err)
			}
			got, err := decodeRoute(gateway.KindHTTPRoute, s)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decodeRoute: -want, +got:\n%s", diff)
			}
			b, err := proto.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			got, err = decodeWireRoute(gateway.KindHTTPRoute, b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decodeWireRoute: -want, +got:\n%s", diff)
			}
		})
	}
}
