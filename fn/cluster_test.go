package fn

import (
	"context"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-tenant-gateway/test/fake"
)

// fakeCluster answers requirements from JSON objects, through test/fake.
// Like every platform of ours, it has the GatewayClass the TenantGateways
// default to, unless noClass.
type fakeCluster struct {
	objects []string // JSON
	served  map[string]bool
	noClass bool
}

// ciliumClass is the GatewayClass the TenantGateways default to.
const ciliumClass = `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass","metadata":{"name":"cilium"},"spec":{"controllerName":"io.cilium/gateway-controller"}}`

// v1TLSRoutes is a cluster serving TLSRoute at v1 (Gateway API v1.6).
var v1TLSRoutes = map[string]bool{"gateway.networking.k8s.io/v1 TLSRoute": true}

// run calls the function the way Crossplane does, until its requirements
// settle; it returns the last response and how many calls it took.
func (c fakeCluster) run(t testing.TB, f *Function, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, int) {
	t.Helper()
	cl := fake.Cluster{Served: c.served}
	objects := c.objects
	if !c.noClass {
		objects = append([]string{ciliumClass}, objects...)
	}
	for _, o := range objects {
		cl.Objects = append(cl.Objects, resource.MustStructJSON(o))
	}
	_, rsp, calls, err := cl.Run(context.Background(), f, req)
	if err != nil {
		t.Fatal(err)
	}
	return rsp, calls
}
