package bench

import (
	"testing"

	"google.golang.org/protobuf/proto"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// TestSteadyStateRequest keeps the benchmark honest: the request it measures
// must compose in one call (no requirement left to resolve, nothing Fatal),
// scoped requests must carry only the admitted namespaces' routes, and a
// route must cost what the README says.
func TestSteadyStateRequest(t *testing.T) {
	for _, s := range []Scale{{Mode: "http01", Routes: 200, Namespaces: 20}, {Mode: "dns01", Routes: 200, Namespaces: 20, Admitted: 5, Scoped: true}} {
		b, err := Request(s)
		if err != nil {
			t.Fatal(err)
		}
		req := &fnv1.RunFunctionRequest{}
		if err := proto.Unmarshal(b, req); err != nil {
			t.Fatal(err)
		}
		rsp, err := Function(s).RunFunction(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		for name := range rsp.GetRequirements().GetResources() {
			if _, ok := req.GetRequiredResources()[name]; !ok {
				t.Errorf("%s: requirement %s is not resolved in the request", s, name)
			}
		}
		if len(rsp.GetDesired().GetResources()) == 0 || len(rsp.GetConditions()) == 0 {
			t.Errorf("%s: want a composed response with conditions, got %d resources and %d conditions", s, len(rsp.GetDesired().GetResources()), len(rsp.GetConditions()))
		}
		n, size := 0, 0
		for _, rs := range req.GetRequiredResources() {
			for _, it := range rs.GetItems() {
				if it.GetResource().GetFields()["kind"].GetStringValue() == "HTTPRoute" {
					n++
					size += proto.Size(it)
				}
			}
		}
		want := s.Routes
		if s.Scoped {
			want = s.Routes * s.Admitted / s.Namespaces
		}
		if n != want {
			t.Errorf("%s: request carries %d routes, want %d", s, n, want)
		}
		if per := size / n; per < 1200 || per > 1700 {
			t.Errorf("%s: %d bytes per route, the README says about 1.4 KiB", s, per)
		}
	}
}
