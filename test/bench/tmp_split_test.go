package bench

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

func BenchmarkTmpSplit(b *testing.B) {
	s := Scale{Mode: "http01", Routes: 10000, Namespaces: 1000}
	raw, err := Request(s)
	if err != nil {
		b.Fatal(err)
	}
	req := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(raw, req); err != nil {
		b.Fatal(err)
	}
	f := Function(s)
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			r := &fnv1.RunFunctionRequest{}
			_ = proto.Unmarshal(raw, r)
		}
	})
	b.Run("run", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			rsp, _ := f.RunFunction(context.Background(), req)
			_, _ = proto.Marshal(rsp)
		}
	})
}
