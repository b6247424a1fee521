package fn

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// checkEncoding holds the encoder to structpb.NewStruct and deterministic
// proto.Marshal: the same bytes, or an error from both.
func checkEncoding(t *testing.T, m map[string]any) {
	t.Helper()
	s, wantErr := structpb.NewStruct(m)
	var e structEncoder
	got, gotErr := e.appendStruct(nil, m)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("structpb.NewStruct error %v, encoder error %v", wantErr, gotErr)
	}
	if wantErr != nil {
		return
	}
	want, err := proto.MarshalOptions{Deterministic: true}.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("encoder bytes differ from proto.Marshal's:\nwant %x\ngot  %x", want, got)
	}
	if n := sizeStruct(m); n != len(got) {
		t.Fatalf("sizeStruct says %d bytes, the encoder wrote %d", n, len(got))
	}
	if len(e.keys) != 0 {
		t.Fatalf("the encoder left %d keys on its stack", len(e.keys))
	}
}

func TestStructEncoding(t *testing.T) {
	long := string(bytes.Repeat([]byte("x"), 300))
	cases := map[string]map[string]any{
		"nil":   nil,
		"empty": {},
		"every kind": {
			"null": nil, "t": true, "f": false, "s": "str", "empty": "", "f64": 1.5, "f32": float32(2.5),
			"i": 1, "i8": int8(-8), "i16": int16(16), "i32": int32(-32), "i64": int64(1 << 60),
			"u": uint(1), "u8": uint8(8), "u16": uint16(16), "u32": uint32(32), "u64": uint64(math.MaxUint64),
			"num": json.Number("12.25"), "bytes": []byte{0, 1, 2, 255},
			"map": map[string]any{"a": map[string]any{}, "b": []any{}}, "nilMap": map[string]any(nil), "nilList": []any(nil),
			"list": []any{nil, "x", 3.0, []any{map[string]any{"k": "v"}}},
			"nan":  math.NaN(), "inf": math.Inf(-1), "negZero": math.Copysign(0, -1),
		},
		// Lengths past one byte, at every level.
		"long": {long: long, "nested": map[string]any{"list": []any{long, map[string]any{long: []any{long, long}}}}},
		// Keys sort by bytes.
		"order": {"b": 1, "a": 2, "B": 3, "": 4, "ä": 5, "aa": 6},
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) { checkEncoding(t, m) })
	}
	for name, m := range map[string]map[string]any{
		"bad key":          {"\xff": "v"},
		"bad string":       {"k": []any{"\xff"}},
		"bad number":       {"k": json.Number("1e")},
		"unsupported type": {"k": map[string]any{"l": []string{"x"}}},
	} {
		t.Run(name, func(t *testing.T) { checkEncoding(t, m) })
	}
}

// TestDesiredResource checks that a Resource written as wire bytes decodes
// to the one the SDK writes, and that DecodeDesired gives readers its Struct.
func TestDesiredResource(t *testing.T) {
	content := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}, "data": map[string]any{"k": "v"}}
	s, err := structpb.NewStruct(content)
	if err != nil {
		t.Fatal(err)
	}
	want := &fnv1.Resource{Resource: s, Ready: fnv1.Ready_READY_TRUE}
	var e structEncoder
	r, err := e.desiredResource(content, fnv1.Ready_READY_TRUE)
	if err != nil {
		t.Fatal(err)
	}
	// A second resource from the same buffer must leave the first alone.
	if _, err := e.desiredResource(map[string]any{"kind": "Other"}, fnv1.Ready_READY_FALSE); err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	got := &fnv1.Resource{}
	if err := proto.Unmarshal(b, got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(want, got) {
		t.Errorf("decoded %v, want %v", got, want)
	}
	rsp := &fnv1.RunFunctionResponse{Desired: &fnv1.State{Composite: r, Resources: map[string]*fnv1.Resource{"x": proto.CloneOf(r)}}}
	if err := DecodeDesired(rsp); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*fnv1.Resource{rsp.GetDesired().GetComposite(), rsp.GetDesired().GetResources()["x"]} {
		if !proto.Equal(want, d) {
			t.Errorf("DecodeDesired gave %v, want %v", d, want)
		}
	}
}

// FuzzStructEncoding holds the encoder to structpb over any JSON object,
// decoded with float64 numbers and with json.Number.
func FuzzStructEncoding(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":null,"b":true,"c":"x","d":1.5,"e":[1,"two",{"three":[]}],"f":{"g":{}}}`,
		`{"metadata":{"name":"n","labels":{"a":"b"}},"spec":{"listeners":[{"name":"l","port":443,"tls":{"certificateRefs":[{"name":"c"}]}}]}}`,
		`{"n":1e308,"m":-0,"k":123456789012345678901234567890}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err == nil {
			checkEncoding(t, m)
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var n map[string]any
		if err := d.Decode(&n); err == nil {
			checkEncoding(t, n)
		}
	})
}
