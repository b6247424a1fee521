package fn

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/tenant"
)

// observedSeeds are observed composed resources of every shape the readers
// of observed.go tell apart: full ones, and fields of the wrong type.
var observedSeeds = []string{
	`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":"cozystack","generation":3},` +
		`"spec":{"listeners":[{"name":"http","hostname":"a.example.org"},{"name":""},{"hostname":"x"},"odd"]},` +
		`"status":{"conditions":[{"type":"Accepted","status":"True","observedGeneration":3},{"type":"Programmed","status":"False","reason":"Pending","message":"wait","observedGeneration":2}],` +
		`"listeners":[{"name":"http","conditions":[{"type":"Programmed","status":"True","observedGeneration":2},{"type":"Accepted","status":"True","observedGeneration":1}]},{"name":"https"},7]}}`,
	`{"apiVersion":"cert-manager.io/v1","kind":"Certificate","spec":{"dnsNames":["*.example.org","example.org",7,null]},"status":{"conditions":[{"type":"Ready","status":"True","reason":"Ready","message":"ok"}]}}`,
	`{"apiVersion":"kubernetes.crossplane.io/v1alpha2","kind":"Object","status":{"atProvider":{"manifest":{"metadata":{"labels":{"a":"b","n":1,"t":true}},` +
		`"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"Synced"}]}}},"conditions":[{"type":"Ready","status":"True","reason":"Available"}]}}`,
	`{"kind":"Object","status":{"atProvider":{"manifest":"x"},"conditions":"x"}}`,
	`{"metadata":{"generation":"3"},"spec":{"listeners":{"name":"x"},"dnsNames":"x"},"status":{"conditions":[{"type":7,"observedGeneration":true},null],"listeners":[{"name":1,"conditions":{}}]}}`,
	`{"metadata":{"generation":-1.5},"status":{"conditions":[{"type":"Ready","status":"True","observedGeneration":1e300}]}}`,
	`{}`,
}

// observedAll is everything the readers of observed.go read of the
// resource res, observed under each key that reads it.
func observedAll(res *fnv1.Resource) any {
	keys := []string{gateway.KeyGateway, gateway.KeyCertificateWildcard, tenant.KeyReplica, tenant.KeyTenantGateway, "other"}
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{}}}
	for _, k := range keys {
		req.Observed.Resources[k] = res
	}
	return []any{observeGatewayComposed(req), observedReplica(req), observedGatewayConditions(req)}
}

// readBoth reads the Resource message b as protobuf decodes it and as the
// codec keeps it; when the codec would keep it, both must read the same.
func readBoth(t *testing.T, b []byte) {
	t.Helper()
	decoded := &fnv1.Resource{}
	if err := proto.Unmarshal(b, decoded); err != nil || !canonicalResource(b, 0) {
		return
	}
	lazy := &fnv1.Resource{}
	lazy.ProtoReflect().SetUnknown(b)
	if diff := cmp.Diff(observedAll(decoded), observedAll(lazy)); diff != "" {
		t.Fatalf("observed: -protobuf, +lazy:\n%s", diff)
	}
}

// TestObservedLazy: the readers of observed composed resources read the
// same from a Resource's bytes as from its decoded Struct.
func TestObservedLazy(t *testing.T) {
	for _, s := range observedSeeds {
		b, err := proto.Marshal(&fnv1.Resource{Resource: resource.MustStructJSON(s), Ready: fnv1.Ready_READY_TRUE})
		if err != nil {
			t.Fatal(err)
		}
		if !canonicalResource(b, 0) {
			t.Fatalf("seed %s is not in canonical form", s)
		}
		readBoth(t, b)
	}
}

func FuzzObservedLazy(f *testing.F) {
	for _, s := range observedSeeds {
		b, err := proto.Marshal(&fnv1.Resource{Resource: resource.MustStructJSON(s)})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		readBoth(t, b)
	})
}
