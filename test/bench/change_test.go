package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-tenant-gateway/fn"
	"github.com/cozystack/function-tenant-gateway/test/fake"
)

// timed is the function as Crossplane reaches it over gRPC, with the
// benchmark timer running only on the function's side of each call:
// decoding the request bytes, running, encoding the response. Crossplane's
// side (resolving requirements, encoding the request) is not timed.
type timed struct {
	b     *testing.B
	f     *fn.Function
	codec *fn.Codec
	calls int
	// cpu is the process's CPU time (user and system, GC included) spent in
	// the timed part of the calls: on a shared machine wall time counts the
	// waits for a core too.
	cpu time.Duration
	// last is the last request's bytes.
	last []byte
}

func (t *timed) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	b, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	t.calls++
	t.last = b
	before := cpuTime()
	t.b.StartTimer()
	out, err := call(t.f, t.codec, b)
	t.b.StopTimer()
	t.cpu += cpuTime() - before
	if err != nil {
		return nil, err
	}
	rsp := &fnv1.RunFunctionResponse{}
	return rsp, proto.Unmarshal(out, rsp)
}

// changes are the scales of BenchmarkRouteChange: the root tenant's Gateway
// at 10,000 routes (its 64 listeners taken, so a new hostname composes
// nothing new), and at 100 routes, where it gets a listener and a
// Certificate.
var changes = []Scale{
	{Mode: "http01", Routes: 10000, Namespaces: 1000},
	{Mode: "dns01", Routes: 10000, Namespaces: 1000},
	{Mode: "http01", Routes: 20, Namespaces: 10},
}

// BenchmarkRouteChange is one new route on the root tenant's Gateway: every
// call the change causes through Crossplane v2.4's requirement loop (the
// shipped Composition's bootstrap, the last reconcile's resources seeded),
// from the route's event to the reconcile that observes what was applied
// and composes it again unchanged. Crossplane also reconciles on the events
// of its own writes (status); each of those is one more call like the last.
// Reported: function time per change (ns/op), calls and reconciles per
// change, and the time per change over one floor call at that scale.
func BenchmarkRouteChange(b *testing.B) {
	comp, err := os.ReadFile("../../package/configuration/tenantgateway/composition.yaml")
	if err != nil {
		b.Fatal(err)
	}
	bootstrap, err := fake.Bootstrap(comp)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range changes {
		steady, err := steadyState(s, bootstrap)
		if err != nil {
			b.Fatal(err)
		}
		added := resource.MustStructJSON(route("tenant-root", "tenant-t0000", "new", []string{"new.t0000.example.org"}))
		b.Run(s.String(), func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			b.StopTimer()
			t := &timed{b: b, f: fn.NewFunction(), codec: fn.NewCodec()}
			reconciles := 0
			for range b.N {
				r := steady
				r.Cluster.Objects = slices.Concat(steady.Cluster.Objects, []*structpb.Struct{added})
				n, err := untilUnchanged(&r, t)
				if err != nil {
					b.Fatal(err)
				}
				reconciles += n
			}
			// The floor of one call on the last request, the largest.
			floorNs, _ := measure(b, t.last, floor, 3)
			before := cpuTime()
			b.StopTimer()
			for range 3 {
				if _, err := floor(t.last); err != nil {
					b.Fatal(err)
				}
			}
			floorCPU := float64(cpuTime()-before) / 3
			b.ReportMetric(float64(t.calls)/float64(b.N), "calls/change")
			b.ReportMetric(float64(reconciles)/float64(b.N), "reconciles/change")
			b.ReportMetric(float64(t.cpu.Milliseconds())/float64(b.N), "cpu-ms/change")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/floorNs, "x-floor-call-time")
			b.ReportMetric(float64(t.cpu)/float64(b.N)/floorCPU, "x-floor-call-cpu")
		})
	}
}

// cpuTime is the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// steadyState reconciles a fresh TenantGateway until a reconcile composes
// in one call.
func steadyState(s Scale, bootstrap *fnv1.Requirements) (fake.Reconciler, error) {
	objects, err := cluster(s)
	if err != nil {
		return fake.Reconciler{}, err
	}
	r := fake.Reconciler{
		Cluster:   fake.Cluster{Objects: objects, Served: map[string]bool{"gateway.networking.k8s.io/v1 TLSRoute": true}},
		Bootstrap: bootstrap,
		Request:   &fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: "bench"}, Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr(s)}}},
	}
	for range 4 {
		_, calls, err := r.Reconcile(context.Background(), fn.NewFunction())
		if err != nil {
			return r, err
		}
		if calls == 1 {
			return r, nil
		}
	}
	return r, fmt.Errorf("%s: no one-call reconcile after 4", s)
}

// untilUnchanged reconciles until a reconcile composes what the one before
// composed (it would write nothing), and returns how many it took.
func untilUnchanged(r *fake.Reconciler, f fake.Runner) (int, error) {
	var last *fnv1.State
	for n := 1; n <= 4; n++ {
		rsp, _, err := r.Reconcile(context.Background(), f)
		if err != nil {
			return n, err
		}
		if proto.Equal(rsp.GetDesired(), last) {
			return n, nil
		}
		last = rsp.GetDesired()
	}
	return 4, fmt.Errorf("the desired state did not settle within 4 reconciles")
}
