package bench

import (
	"testing"

	"google.golang.org/protobuf/proto"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-tenant-gateway/fn"
)

// TestSteadyStateRequest keeps the benchmark honest: the request it measures
// must compose in one call (no requirement left to resolve, nothing Fatal),
// scoped requests must carry only the admitted namespaces' routes, and a
// route must cost what docs/benchmarks.md says.
func TestSteadyStateRequest(t *testing.T) {
	for _, s := range []Scale{{Mode: "http01", Routes: 200, Namespaces: 20}, {Mode: "dns01", Routes: 200, Namespaces: 20, Admitted: 5, Scoped: true}} {
		req, rsp := run(t, s)
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
			t.Errorf("%s: %d bytes per route, docs/benchmarks.md says about 1.4 KiB", s, per)
		}
	}
}

// TestResponseBounded sends a shape whose uncut status would pass the 4 MiB
// Crossplane accepts (2,000 routes of 16 contested hostnames
// with long first labels), and checks what comes back fits with room to
// spare, status and messages included.
func TestResponseBounded(t *testing.T) {
	for _, mode := range []string{"http01", "dns01"} {
		s := Scale{Mode: mode, Routes: 2000, Namespaces: 100, Hostnames: 16, Contested: true}
		_, rsp := run(t, s)
		const limit = 1 << 20 // a quarter of Crossplane's 4 MiB
		if n := proto.Size(rsp); n > limit {
			t.Errorf("%s: response of %d bytes, want at most %d", s, n, limit)
		}
		st := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue().GetFields()
		if n := len(st["conflicts"].GetListValue().GetValues()); n != 100 {
			t.Errorf("%s: status.conflicts has %d entries, want 100", s, n)
		}
		if n := st["conflictCount"].GetNumberValue(); n != 16000 {
			t.Errorf("%s: status.conflictCount is %v, want 16000", s, n)
		}
		if n := len(rsp.GetResults()); n > 4 {
			t.Errorf("%s: %d results in one response", s, n)
		}
	}
}

// run builds the steady-state request of a scale and runs the function on it.
func run(t *testing.T, s Scale) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse) {
	t.Helper()
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
	if err := fn.DecodeDesired(rsp); err != nil {
		t.Fatal(err)
	}
	return req, rsp
}
