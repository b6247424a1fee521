package bench

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/cozystack/function-tenant-gateway/fn"
)

var scales = []Scale{
	{Mode: "http01", Routes: 100, Namespaces: 10}, {Mode: "http01", Routes: 1000, Namespaces: 100}, {Mode: "http01", Routes: 10000, Namespaces: 1000},
	{Mode: "dns01", Routes: 100, Namespaces: 10}, {Mode: "dns01", Routes: 1000, Namespaces: 100}, {Mode: "dns01", Routes: 10000, Namespaces: 1000},
	// A child tenant's Gateway admitting 10 of 1000 namespaces: every route
	// of the cluster in the request, or only the admitted namespaces'.
	{Mode: "http01", Routes: 10000, Namespaces: 1000, Admitted: 10},
	{Mode: "http01", Routes: 10000, Namespaces: 1000, Admitted: 10, Scoped: true},
	// Hostile shapes: 16,000 hostnames with long first labels, each claimed
	// from two namespaces; 12,000 routes of 16 hostnames each.
	{Mode: "http01", Routes: 2000, Namespaces: 100, Hostnames: 16, Contested: true},
	{Mode: "dns01", Routes: 2000, Namespaces: 100, Hostnames: 16, Contested: true},
	{Mode: "http01", Routes: 12000, Namespaces: 1000, Hostnames: 16},
}

// last is the request built last and its scale: a row's request is built
// when a benchmark -bench selects first needs it, rather than every row's
// up front, and only one is kept, so that the heap a row runs beside holds
// no other row's request.
var last struct {
	scale Scale
	req   []byte
}

// request is the steady-state request of a scale.
func request(b *testing.B, s Scale) []byte {
	b.Helper()
	if last.req != nil && last.scale == s {
		return last.req
	}
	last.req = nil
	req, err := Request(s)
	if err != nil {
		b.Fatal(err)
	}
	last.scale, last.req = s, req
	return req
}

// full is one RunFunction as the function's gRPC server runs it: decode the
// request with the function's codec (which copies it out of gRPC's buffers),
// run, encode the response.
func full(f *fn.Function) func([]byte) (int, error) {
	codec := fn.NewCodec()
	return func(b []byte) (int, error) {
		out, err := call(f, codec, b)
		return len(out), err
	}
}

// call is one RunFunction on the request's bytes, returning the response's.
func call(f *fn.Function, codec *fn.Codec, b []byte) ([]byte, error) {
	req := &fnv1.RunFunctionRequest{}
	if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, req); err != nil {
		return nil, err
	}
	rsp, err := f.RunFunction(context.Background(), req)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(rsp)
}

// floor is the do-nothing function: decode the request and return the
// desired state it was given.
func floor(b []byte) (int, error) {
	req := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(b, req); err != nil {
		return 0, err
	}
	out, err := proto.Marshal(response.To(req, fn.DefaultTTL))
	return len(out), err
}

// BenchmarkRunFunction reports, per scale: time, bytes and allocations per
// run, the peak heap growth during the runs, the request size, and the
// ratios of time, CPU time and allocated bytes to the floor measured in the
// same run.
func BenchmarkRunFunction(b *testing.B) {
	for _, s := range scales {
		b.Run(s.String(), func(b *testing.B) {
			b.StopTimer()
			req := request(b, s)
			// The floor, measured in the same run on the same request, so
			// the ratios compare like with like.
			cpu := cpuTime()
			floorNs, floorBytes := measure(b, req, floor, max(b.N, 3))
			floorCPU := float64(cpuTime()-cpu) / float64(max(b.N, 3))
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu = cpuTime()
			peak := loop(b, req, full(Function(s)))
			fullCPU := float64(cpuTime()-cpu) / float64(b.N)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			bytes := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N)
			b.ReportMetric(float64(len(req)), "req-B")
			b.ReportMetric(float64(len(req))/float64(s.Routes), "req-B/route")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/floorNs, "x-floor-time")
			b.ReportMetric(bytes/floorBytes, "x-floor-B")
			// CPU time (GC included) is steadier than wall time on a
			// shared machine: it leaves out the waits for a core.
			b.ReportMetric(fullCPU/floorCPU, "x-floor-cpu")
		})
	}
}

// measure runs f n times outside the benchmark timer and returns its time
// and allocated bytes per run.
func measure(b *testing.B, req []byte, f func([]byte) (int, error), n int) (float64, float64) {
	b.StopTimer()
	defer b.StartTimer()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := f(req); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	return float64(elapsed.Nanoseconds()) / float64(n), float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
}

// BenchmarkFloor is the do-nothing function alone, for reference.
func BenchmarkFloor(b *testing.B) {
	for _, s := range scales {
		b.Run(s.String(), func(b *testing.B) { loop(b, request(b, s), floor) })
	}
}

// loop runs f b.N times and returns the peak growth of live heap objects
// over the start, sampled every 200µs.
func loop(b *testing.B, req []byte, f func([]byte) (int, error)) uint64 {
	b.ReportAllocs()
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				metrics.Read(s)
				if v := s[0].Value.Uint64(); v > base {
					mu.Lock()
					peak = max(peak, v-base)
					mu.Unlock()
				}
			}
		}
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f(req); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(done)
	mu.Lock()
	defer mu.Unlock()
	return peak
}
