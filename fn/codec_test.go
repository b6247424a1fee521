package fn

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-tenant-gateway/test/fake"
)

// codecRoutes are routes of every shape decodeRoute tells apart: good ones of
// both kinds, and each malformation it names.
var codecRoutes = []string{
	`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"a","namespace":"tenant-root","labels":{"x":"y"}},"spec":{"parentRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"cozystack","namespace":"tenant-root"}],"hostnames":["a.example.org","b.example.org"],"rules":[{"backendRefs":[{"name":"a","port":80}]}]},"status":{"parents":[]}}`,
	`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"nohosts","namespace":"tenant-root"},"spec":{"parentRefs":[{"name":"cozystack"}],"hostnames":null}}`,
	`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"bad","namespace":"tenant-root"},"spec":{"parentRefs":[{"name":"cozystack"}],"hostnames":"a.example.org"}}`,
	`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"odd","namespace":"tenant-root"},"spec":{"parentRefs":[{"name":"cozystack"}],"hostnames":[7]}}`,
	`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"refs","namespace":"tenant-root"},"spec":{"parentRefs":["cozystack"]}}`,
	`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"refs2","namespace":"tenant-root"},"spec":{"parentRefs":{"name":"cozystack"}}}`,
	`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"namespace":"tenant-root"},"spec":{}}`,
	`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":"x","spec":7}`,
	`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"TLSRoute","metadata":{"name":"db","namespace":"tenant-root"},"spec":{"parentRefs":[{"name":"cozystack","sectionName":"tls-db"}],"hostnames":["db.example.org"]}}`,
	`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"ports","namespace":"tenant-root"},"spec":{"parentRefs":[{"name":"cozystack","port":443,"sectionName":"https"},{"name":"cozystack","port":80},{"name":"cozystack","port":"x"}],"hostnames":["p.example.org"]}}`,
}

// codecRequest is a TenantGateway's request with its requirements resolved,
// routes listed per namespace (scoped) or cluster-wide, as marshalled bytes.
func codecRequest(t testing.TB, scoped bool) []byte {
	t.Helper()
	f := NewFunction()
	if !scoped {
		f = NewFunction(WithMaxScopedNamespaces(0))
	}
	cl := fake.Cluster{Served: v1TLSRoutes, Objects: objects(append([]string{rootNamespace}, codecRoutes...)...)}
	last, _, _, err := cl.Run(context.Background(), f, newRequest(t, `{"apex":"example.org"}`, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(last)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeBoth decodes b with protobuf and with DecodeRequest; both must agree
// on whether it decodes, and then on every route, namespace and warning the
// function observes, and on the whole response, byte for byte, after the
// bytes DecodeRequest read are cleared.
func decodeBoth(t *testing.T, b []byte, f *Function) {
	t.Helper()
	want := &fnv1.RunFunctionRequest{}
	wantErr := proto.Unmarshal(b, want)
	got := &fnv1.RunFunctionRequest{}
	own := append([]byte(nil), b...)
	gotErr := DecodeRequest(own, got)
	// The decoded request must own what it keeps.
	clear(own)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("protobuf decoding error %v, lazy decoding error %v", wantErr, gotErr)
	}
	if wantErr != nil {
		return
	}
	type observed struct {
		Routes     any
		Namespaces any
		Skipped    []string
	}
	var w, g observed
	w.Routes, w.Namespaces, w.Skipped = observe(want)
	g.Routes, g.Namespaces, g.Skipped = observe(got)
	if diff := cmp.Diff(w, g); diff != "" {
		t.Fatalf("observed: -protobuf, +lazy:\n%s", diff)
	}
	m := proto.MarshalOptions{Deterministic: true}
	wantRsp, err := f.RunFunction(context.Background(), want)
	if err != nil {
		t.Fatal(err)
	}
	gotRsp, err := f.RunFunction(context.Background(), got)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := m.Marshal(wantRsp)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := m.Marshal(gotRsp)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wb, gb) {
		t.Fatalf("responses differ:\nprotobuf: %v\nlazy:     %v", wantRsp, gotRsp)
	}
}

// lazyKeys are the required resources a decoded request holds as bytes.
func lazyKeys(req *fnv1.RunFunctionRequest) []string {
	var out []string
	for k, rs := range req.GetRequiredResources() {
		if len(rs.GetItems()) == 0 && len(rs.ProtoReflect().GetUnknown()) > 0 {
			out = append(out, k)
		}
	}
	return out
}

// entry encodes one required_resources map entry.
func entry(key string, value []byte) []byte {
	var e []byte
	e = protowire.AppendTag(e, fieldEntryKey, protowire.BytesType)
	e = protowire.AppendString(e, key)
	e = protowire.AppendTag(e, fieldEntryValue, protowire.BytesType)
	e = protowire.AppendBytes(e, value)
	b := protowire.AppendTag(nil, fieldRequestRequiredResources, protowire.BytesType)
	return protowire.AppendBytes(b, e)
}

// observedRequest is codecRequest with composed resources observed: those
// the function reads fields of under their keys, the rest under others.
func observedRequest(t testing.TB) []byte {
	t.Helper()
	req := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(codecRequest(t, false), req); err != nil {
		t.Fatal(err)
	}
	keys := []string{"gateway", "certificate-wildcard"}
	req.Observed.Resources = map[string]*fnv1.Resource{}
	for i, s := range observedSeeds {
		key := fmt.Sprintf("other-%d", i)
		if i < len(keys) {
			key = keys[i]
		}
		req.Observed.Resources[key] = &fnv1.Resource{Resource: resource.MustStructJSON(s), Ready: fnv1.Ready_READY_TRUE}
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lazyObserved are the observed composed resources a decoded request holds
// as bytes.
func lazyObserved(req *fnv1.RunFunctionRequest) []string {
	var out []string
	for k, r := range req.GetObserved().GetResources() {
		if r.GetResource() == nil && len(r.ProtoReflect().GetUnknown()) > 0 {
			out = append(out, k)
		}
	}
	return out
}

func TestDecodeRequest(t *testing.T) {
	one, err := proto.Marshal(&fnv1.Resources{Items: []*fnv1.Resource{{Resource: resource.MustStructJSON(codecRoutes[0])}}})
	if err != nil {
		t.Fatal(err)
	}
	// The same Struct field twice in one item: protobuf merges them.
	twice := append(append([]byte(nil), one...), one...)
	twiceInItem := protowire.AppendTag(nil, fieldResourcesItems, protowire.BytesType)
	item, _ := protowire.ConsumeBytes(one[protowire.SizeTag(fieldResourcesItems):])
	twiceInItem = protowire.AppendBytes(twiceInItem, append(append([]byte(nil), item...), item...))
	observed := observedRequest(t)
	// The observed state alone, given twice: protobuf merges the two.
	var state []byte
	eachFieldRaw(observed, func(num protowire.Number, _ protowire.Type, _, raw []byte) bool {
		if num == fieldRequestObserved {
			state = raw
		}
		return true
	})
	// One observed resource given twice in one state.
	gw, err := proto.Marshal(&fnv1.State{Resources: map[string]*fnv1.Resource{"gateway": {Resource: resource.MustStructJSON(observedSeeds[0])}}})
	if err != nil {
		t.Fatal(err)
	}
	gwTwice := protowire.AppendBytes(protowire.AppendTag(nil, fieldRequestObserved, protowire.BytesType), append(append([]byte(nil), gw...), gw...))
	cases := map[string]struct {
		reason   string
		b        []byte
		lazy     []string
		observed []string
	}{
		"Observed": {
			reason:   "Observed composed resources are kept as bytes",
			b:        observed,
			lazy:     []string{"httproutes", "tlsroutes"},
			observed: []string{"gateway", "certificate-wildcard", "other-2", "other-3", "other-4", "other-5", "other-6"},
		},
		"ObservedTwice": {
			reason: "An observed state given twice is merged by protobuf, so protobuf decodes the request",
			b:      append(append([]byte(nil), state...), state...),
		},
		"ObservedKeyTwice": {
			reason: "An observed resource given twice is left to protobuf, whose last one wins",
			b:      gwTwice,
		},
		"Scoped": {
			reason: "Routes listed per namespace are kept as bytes, every other requirement decoded",
			b:      codecRequest(t, true),
			lazy:   []string{"httproutes/tenant-root", "tlsroutes/tenant-root"},
		},
		"ClusterWide": {
			reason: "Routes listed cluster-wide are kept as bytes",
			b:      codecRequest(t, false),
			lazy:   []string{"httproutes", "tlsroutes"},
		},
		"TwoItems": {
			reason: "Two items in canonical form stay bytes",
			b:      entry(reqHTTPRoutes, twice),
			lazy:   []string{reqHTTPRoutes},
		},
		"MergedStruct": {
			reason: "A Struct given twice in one item is merged by protobuf, so protobuf decodes it",
			b:      entry(reqHTTPRoutes, twiceInItem),
		},
		"KeyTwice": {
			reason: "A route requirement given twice is left to protobuf, whose last one wins",
			b:      append(entry(reqHTTPRoutes, one), entry(reqHTTPRoutes, nil)...),
		},
		"NotARoute": {
			reason: "Other requirements are decoded by protobuf",
			b:      entry("httproutesx", one),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{}
			if err := DecodeRequest(append([]byte(nil), tc.b...), req); err != nil {
				t.Fatal(err)
			}
			got := lazyKeys(req)
			if diff := cmp.Diff(tc.lazy, got, sortStrings); diff != "" {
				t.Errorf("%s: lazy requirements -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.observed, lazyObserved(req), sortStrings); diff != "" {
				t.Errorf("%s: lazy observed resources -want, +got:\n%s", tc.reason, diff)
			}
			decodeBoth(t, tc.b, NewFunction())
		})
	}
}

func TestCodecUnmarshal(t *testing.T) {
	b := codecRequest(t, true)
	// The request as gRPC hands it over: in buffers it frees afterwards.
	req := &fnv1.RunFunctionRequest{}
	if err := NewCodec().Unmarshal(mem.BufferSlice{mem.SliceBuffer(b[:len(b)/2]), mem.SliceBuffer(b[len(b)/2:])}, req); err != nil {
		t.Fatal(err)
	}
	clear(b)
	if got := len(lazyKeys(req)); got != 2 {
		t.Fatalf("%d lazy requirements, want 2", got)
	}
	routes, _, skipped := observe(req)
	if len(routes) != 4 || len(skipped) != 5 {
		t.Errorf("after gRPC's buffers are cleared, the lazy request reads %d routes and %d skipped, want 4 and 5: it must own its bytes", len(routes), len(skipped))
	}
}

func FuzzDecodeRequest(f *testing.F) {
	f.Add(codecRequest(f, true))
	f.Add(codecRequest(f, false))
	f.Add(observedRequest(f))
	for _, r := range codecRoutes {
		b, err := proto.Marshal(&fnv1.Resources{Items: []*fnv1.Resource{{Resource: resource.MustStructJSON(r)}}})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(entry(reqHTTPRoutes, b))
		f.Add(entry(reqTLSRoutes+"/tenant-root", b))
	}
	fn := NewFunction()
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeBoth(t, b, fn)
	})
}

// sortStrings compares lists of strings in any order.
var sortStrings = cmpopts.SortSlices(func(a, b string) bool { return a < b })
