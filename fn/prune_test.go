package fn

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// pruned is what the codec keeps of a Resources message of routes.
func pruned(t *testing.T, b []byte) []byte {
	t.Helper()
	var p pruner
	size := p.resources(b, routeKeep)
	p.write, p.b = true, make([]byte, 0, size)
	if n := p.resources(b, routeKeep); n != size || len(p.b) != size || cap(p.b) != size {
		t.Fatalf("measured %d bytes, wrote %d (said %d) into a buffer of %d", size, len(p.b), n, cap(p.b))
	}
	return p.b
}

// checkPruned holds what the reader reads of the pruned routes to what it
// reads of the whole ones.
func checkPruned(t *testing.T, b []byte) {
	t.Helper()
	if !canonicalResources(b) {
		return
	}
	kept := pruned(t, b)
	if !canonicalResources(kept) {
		t.Fatalf("the pruned routes are not in canonical form: %x", kept)
	}
	type read struct {
		Routes   any
		Warnings []string
	}
	var whole, less read
	whole.Routes, whole.Warnings = observeWireRoutes(b, "HTTPRoute")
	less.Routes, less.Warnings = observeWireRoutes(kept, "HTTPRoute")
	if diff := cmp.Diff(whole, less); diff != "" {
		t.Fatalf("routes read: -whole, +pruned:\n%s", diff)
	}
}

func TestPruneRoutes(t *testing.T) {
	rs := &fnv1.Resources{}
	for _, r := range codecRoutes {
		rs.Items = append(rs.Items, &fnv1.Resource{Resource: resource.MustStructJSON(r), Ready: fnv1.Ready_READY_TRUE})
	}
	rs.Items = append(rs.Items, &fnv1.Resource{}, &fnv1.Resource{Resource: resource.MustStructJSON(`{"metadata":{"name":"s","namespace":"n","labels":{"` + gateway.LabelHTTP01Solver + `":"true","x":"y"}},"spec":{"hostnames":["h"]}}`)})
	b, err := proto.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	checkPruned(t, b)
	if kept := pruned(t, b); len(kept) >= len(b) {
		t.Errorf("pruning kept %d of %d bytes", len(kept), len(b))
	}
}

func FuzzPruneRoutes(f *testing.F) {
	for _, r := range codecRoutes {
		b, err := proto.Marshal(&fnv1.Resources{Items: []*fnv1.Resource{{Resource: resource.MustStructJSON(r)}}})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(checkPruned)
}

// BenchmarkPruneRoutes measures pruning 1,000 routes of the benchmark's
// shape, both passes.
func BenchmarkPruneRoutes(b *testing.B) {
	const route = `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"app00001","namespace":"tenant-t0001","uid":"6b1d1c3e-0d5e-4c1a-9a53-000000008012","resourceVersion":"123456","generation":1,"creationTimestamp":"2026-11-01T00:00:00Z","labels":{"app.kubernetes.io/name":"app00001","app.kubernetes.io/managed-by":"Helm"}},` +
		`"spec":{"parentRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"cozystack","namespace":"tenant-root"}],"hostnames":["t0001.example.org"],"rules":[{"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"backendRefs":[{"group":"","kind":"Service","name":"app00001","port":8080,"weight":1}]}]},` +
		`"status":{"parents":[{"parentRef":{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"cozystack","namespace":"tenant-root"},"controllerName":"io.cilium/gateway-controller","conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"Accepted HTTPRoute","observedGeneration":1,"lastTransitionTime":"2026-11-01T00:00:00Z"}]}]}}`
	rs := &fnv1.Resources{}
	for range 1000 {
		rs.Items = append(rs.Items, &fnv1.Resource{Resource: resource.MustStructJSON(route)})
	}
	raw, err := proto.Marshal(rs)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var p pruner
		size := p.resources(raw, routeKeep)
		p.write, p.b = true, make([]byte, 0, size)
		p.resources(raw, routeKeep)
	}
}
