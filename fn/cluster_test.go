package fn

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// fakeCluster answers requirements the way Crossplane does: by name, or by
// labels across every namespace, and a schema for each kind it serves.
type fakeCluster struct {
	objects []string // JSON
	served  map[string]bool
}

// v1TLSRoutes is a cluster serving TLSRoute at v1 (Gateway API v1.6).
var v1TLSRoutes = map[string]bool{"gateway.networking.k8s.io/v1 TLSRoute": true}

func (c fakeCluster) resolve(t testing.TB, r *fnv1.Requirements) (map[string]*fnv1.Resources, map[string]*fnv1.Schema) {
	t.Helper()
	res := map[string]*fnv1.Resources{}
	for name, sel := range r.GetResources() {
		var items []*fnv1.Resource
		for _, o := range c.objects {
			s := resource.MustStructJSON(o)
			m := s.AsMap()
			md, _ := m["metadata"].(map[string]any)
			if m["apiVersion"] != sel.GetApiVersion() || m["kind"] != sel.GetKind() {
				continue
			}
			if sel.Namespace != nil && md["namespace"] != sel.GetNamespace() {
				continue
			}
			switch match := sel.GetMatch().(type) {
			case *fnv1.ResourceSelector_MatchName:
				if md["name"] != match.MatchName {
					continue
				}
			case *fnv1.ResourceSelector_MatchLabels:
				labels, _ := md["labels"].(map[string]any)
				ok := true
				for k, v := range match.MatchLabels.GetLabels() {
					ok = ok && labels[k] == v
				}
				if !ok {
					continue
				}
			}
			items = append(items, &fnv1.Resource{Resource: s})
		}
		res[name] = &fnv1.Resources{Items: items}
	}
	schemas := map[string]*fnv1.Schema{}
	for name, sel := range r.GetSchemas() {
		s := &fnv1.Schema{}
		if c.served[sel.GetApiVersion()+" "+sel.GetKind()] {
			s.OpenapiV3 = &structpb.Struct{Fields: map[string]*structpb.Value{"type": structpb.NewStringValue("object")}}
		}
		schemas[name] = s
	}
	return res, schemas
}

// run calls the function the way Crossplane does: again and again with the
// requirements resolved, until they stop changing, at most five times. It
// returns the last response and how many calls it took.
func (c fakeCluster) run(t testing.TB, f *Function, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, int) {
	t.Helper()
	var last *fnv1.Requirements
	for i := 1; i <= 5; i++ {
		rsp, err := f.RunFunction(context.Background(), req)
		if err != nil {
			t.Fatalf("RunFunction: %v", err)
		}
		for _, r := range rsp.GetResults() {
			if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
				return rsp, i
			}
		}
		if proto.Equal(rsp.GetRequirements(), last) {
			return rsp, i
		}
		last = rsp.GetRequirements()
		req = proto.Clone(req).(*fnv1.RunFunctionRequest) //nolint:forcetypeassert // Clone keeps the type.
		req.RequiredResources, req.RequiredSchemas = c.resolve(t, last)
	}
	t.Fatal("requirements did not settle within five calls")
	return nil, 0
}

func fmtMap(m map[string]string) string { return fmt.Sprint(m) }

func hex8(h string) string { return gateway.Hex8(h) }

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
