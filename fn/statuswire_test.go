package fn

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// checkStatusWire holds the status a TenantGateway writes, its hostnames
// encoded straight to wire bytes, to the same status through the
// unstructured converter and structpb: the same bytes, or an error from
// both.
func checkStatusWire(t *testing.T, st *v1alpha1.TenantGatewayStatus) {
	t.Helper()
	var e structEncoder
	fields, err := statusFields(st)
	var got []byte
	if err == nil {
		got, err = e.appendStruct(nil, map[string]any{"status": fields})
	}
	m, convErr := runtime.DefaultUnstructuredConverter.ToUnstructured(st)
	if convErr != nil {
		t.Fatal(convErr)
	}
	want, wantErr := e.appendStruct(nil, map[string]any{"status": m})
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("converter error %v, direct encoding error %v", wantErr, err)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("status bytes differ from the converter's:\nwant %x\ngot  %x", want, got)
	}
	if err == nil && sizeStruct(map[string]any{"status": fields}) != len(got) {
		t.Fatalf("sizeStruct says %d bytes, the encoder wrote %d", sizeStruct(map[string]any{"status": fields}), len(got))
	}
}

func TestStatusHostnamesEncodedAsTheConverterWould(t *testing.T) {
	long := strings.Repeat("m", 300)
	cases := map[string]*v1alpha1.TenantGatewayStatus{
		"none":  {CertMode: v1alpha1.CertModeHTTP01},
		"empty": {Hostnames: []v1alpha1.HostnameStatus{}},
		"served and left out": {ObservedGeneration: 3, Hostnames: []v1alpha1.HostnameStatus{
			{Hostname: "www.alice.example.org", Route: "HTTPRoute/tenant-alice/www", State: v1alpha1.HostnameState("Ready")},
			{Hostname: "x.example.org", Route: "HTTPRoute/tenant-bob/x", State: v1alpha1.HostnameOverListenerLimit, Message: long},
		}, Listeners: []v1alpha1.ListenerStatus{{Name: "http"}}},
		"empty strings": {Hostnames: []v1alpha1.HostnameStatus{{}}},
		"unicode":       {Hostnames: []v1alpha1.HostnameStatus{{Hostname: "ä.example.org", Message: "—"}}},
		"bad UTF-8":     {Hostnames: []v1alpha1.HostnameStatus{{Hostname: "\xff"}}},
		"bad message":   {Hostnames: []v1alpha1.HostnameStatus{{Hostname: "a", Message: "\xffx"}}},
	}
	many := &v1alpha1.TenantGatewayStatus{}
	for i := range 2000 {
		many.Hostnames = append(many.Hostnames, v1alpha1.HostnameStatus{Hostname: strings.Repeat("h", i%70), Route: "r", State: "Ready", Message: strings.Repeat("w", i%200)})
	}
	cases["many"] = many
	for name, st := range cases {
		t.Run(name, func(t *testing.T) { checkStatusWire(t, st) })
	}
}

func FuzzStatusHostnames(f *testing.F) {
	f.Add("www.example.org", "HTTPRoute/a/b", "Ready", "")
	f.Add("", "", "", "left out")
	f.Fuzz(func(t *testing.T, hostname, route, state, message string) {
		checkStatusWire(t, &v1alpha1.TenantGatewayStatus{Hostnames: []v1alpha1.HostnameStatus{
			{Hostname: hostname, Route: route, State: v1alpha1.HostnameState(state), Message: message},
			{Hostname: message, Route: hostname, State: v1alpha1.HostnameState(route), Message: state},
		}})
	})
}
