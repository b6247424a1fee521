package fn

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

const tgwJSON = `{"apiVersion":"gateway.cozystack.io/v1alpha1","kind":"TenantGateway","metadata":{"name":"cozystack","namespace":"tenant-root","generation":3},"spec":%s}`

func newRequest(t testing.TB, spec string, input *structpb.Struct, desired map[string]*fnv1.Resource) *fnv1.RunFunctionRequest {
	t.Helper()
	xr, err := structpb.NewStruct(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := xr.UnmarshalJSON([]byte(fmt.Sprintf(tgwJSON, spec))); err != nil {
		t.Fatalf("bad test XR: %v", err)
	}
	return &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "test"},
		Input:    input,
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}},
		Desired:  &fnv1.State{Resources: desired},
	}
}

// summary is what a user notices of a response: its results, the objects it
// composes (by key) and the XR status it sets.
type summary struct {
	Results  []string
	Objects  map[string]string
	Status   map[string]any
	Selector []any
	TTL      time.Duration
}

func summarize(t *testing.T, rsp *fnv1.RunFunctionResponse) summary {
	t.Helper()
	s := summary{Objects: map[string]string{}, TTL: rsp.GetMeta().GetTtl().AsDuration()}
	for _, r := range rsp.GetResults() {
		s.Results = append(s.Results, r.GetSeverity().String()+": "+r.GetMessage())
	}
	for k, r := range rsp.GetDesired().GetResources() {
		m := r.GetResource().AsMap()
		md, _ := m["metadata"].(map[string]any)
		s.Objects[k] = fmt.Sprintf("%s %s %s/%s", m["apiVersion"], m["kind"], md["namespace"], md["name"])
		if k == "gateway" {
			l := m["spec"].(map[string]any)["listeners"].([]any)[0].(map[string]any)
			s.Selector = l["allowedRoutes"].(map[string]any)["namespaces"].(map[string]any)["selector"].(map[string]any)["matchExpressions"].([]any)[0].(map[string]any)["values"].([]any)
		}
	}
	if xr := rsp.GetDesired().GetComposite().GetResource(); xr != nil {
		s.Status, _ = xr.AsMap()["status"].(map[string]any)
	}
	return s
}

// pendingHTTP is the status of a fresh http01 TenantGateway without routes:
// its Gateway, with only the http listener, is not observed yet; computed
// from the XR's generation 3.
var pendingHTTP = map[string]any{
	"observedGeneration": float64(3),
	"certMode":           "http01",
	"listeners":          []any{map[string]any{"name": "http", "port": float64(80), "ready": false, "reason": "Pending"}},
}

// platformWith is the platform EnvironmentConfig holding data.
func platformWith(data string) string {
	return `{"apiVersion":"apiextensions.crossplane.io/v1beta1","kind":"EnvironmentConfig","metadata":{"name":"tenant-gateway-platform"},"data":` + data + `}`
}

func TestRunFunction(t *testing.T) {
	composedObjects := map[string]string{
		"gateway":  "gateway.networking.k8s.io/v1 Gateway tenant-root/cozystack",
		"issuer":   "cert-manager.io/v1 Issuer tenant-root/cozystack-gateway",
		"redirect": "gateway.networking.k8s.io/v1 HTTPRoute tenant-root/cozystack-http-redirect",
	}
	earlier := map[string]*fnv1.Resource{"earlier": {Resource: resource.MustStructJSON(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kept","namespace":"tenant-root"}}`)}}
	withEarlier := map[string]string{"earlier": "v1 ConfigMap tenant-root/kept"}
	for k, v := range composedObjects {
		withEarlier[k] = v
	}

	cases := map[string]struct {
		reason  string
		spec    string
		input   *structpb.Struct
		desired map[string]*fnv1.Resource
		cluster []string
		want    summary
	}{
		"NoInput": {
			reason: "A Composition without input gets the defaults: cert-manager in cozy-cert-manager",
			spec:   `{"apex":"example.org"}`,
			want: summary{
				Objects:  composedObjects,
				Status:   pendingHTTP,
				Selector: []any{"tenant-root", "cozy-cert-manager"},
				TTL:      DefaultTTL,
			},
		},
		"InputOverridesCertManagerNamespace": {
			reason: "The input moves the cert-manager namespace admitted on port 80",
			spec:   `{"apex":"example.org"}`,
			input:  resource.MustStructJSON(`{"apiVersion":"fn.gateway.cozystack.io/v1beta1","kind":"Input","certManagerNamespace":"cert-manager"}`),
			want: summary{
				Objects:  composedObjects,
				Status:   pendingHTTP,
				Selector: []any{"tenant-root", "cert-manager"},
				TTL:      DefaultTTL,
			},
		},
		"PlatformSetsCertManagerNamespace": {
			reason:  "The platform EnvironmentConfig moves the cert-manager namespace admitted on port 80, without input",
			spec:    `{"apex":"example.org"}`,
			cluster: []string{platformWith(`{"gateway":{"certManagerNamespace":"cert-manager"}}`)},
			want: summary{
				Objects:  composedObjects,
				Status:   pendingHTTP,
				Selector: []any{"tenant-root", "cert-manager"},
				TTL:      DefaultTTL,
			},
		},
		"PlatformWinsOverInput": {
			reason:  "The input is only the default: the platform setting wins",
			spec:    `{"apex":"example.org"}`,
			input:   resource.MustStructJSON(`{"apiVersion":"fn.gateway.cozystack.io/v1beta1","kind":"Input","certManagerNamespace":"from-input"}`),
			cluster: []string{platformWith(`{"gateway":{"certManagerNamespace":"cert-manager"}}`)},
			want: summary{
				Objects:  composedObjects,
				Status:   pendingHTTP,
				Selector: []any{"tenant-root", "cert-manager"},
				TTL:      DefaultTTL,
			},
		},
		"PlatformWithoutSettingKeepsInput": {
			reason:  "Platform settings that leave the namespace out (or empty) keep the input's",
			spec:    `{"apex":"example.org"}`,
			input:   resource.MustStructJSON(`{"apiVersion":"fn.gateway.cozystack.io/v1beta1","kind":"Input","certManagerNamespace":"from-input"}`),
			cluster: []string{platformWith(`{"publishing":{"host":"example.org"},"gateway":{"certManagerNamespace":""}}`)},
			want: summary{
				Objects:  composedObjects,
				Status:   pendingHTTP,
				Selector: []any{"tenant-root", "from-input"},
				TTL:      DefaultTTL,
			},
		},
		"PlatformNamespaceNotALabel": {
			reason:  "A platform namespace that is no namespace name is refused, naming the setting and the EnvironmentConfig, with nothing composed",
			spec:    `{"apex":"example.org"}`,
			cluster: []string{platformWith(`{"gateway":{"certManagerNamespace":"Cert_Manager"}}`)},
			want: summary{
				Results: []string{`SEVERITY_FATAL: cannot read the platform settings in EnvironmentConfig tenant-gateway-platform: platform setting gateway.certManagerNamespace "Cert_Manager" is not a namespace name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
				Objects: map[string]string{},
				TTL:     DefaultTTL,
			},
		},
		"PlatformNamespaceNotAString": {
			reason:  "A platform namespace of the wrong type is refused, never a panic",
			spec:    `{"apex":"example.org"}`,
			cluster: []string{platformWith(`{"gateway":{"certManagerNamespace":["cert-manager"]}}`)},
			want: summary{
				Results: []string{`SEVERITY_FATAL: cannot read the platform settings in EnvironmentConfig tenant-gateway-platform: platform setting gateway.certManagerNamespace must be a string, not [cert-manager]`},
				Objects: map[string]string{},
				TTL:     DefaultTTL,
			},
		},
		"KeepsEarlierSteps": {
			reason:  "Desired resources of earlier pipeline steps are kept",
			spec:    `{"apex":"example.org"}`,
			desired: earlier,
			want: summary{
				Objects:  withEarlier,
				Status:   pendingHTTP,
				Selector: []any{"tenant-root", "cozy-cert-manager"},
				TTL:      DefaultTTL,
			},
		},
		"InvalidSpec": {
			reason: "An invalid spec is a Fatal result naming the field and the allowed values, with nothing composed",
			spec:   `{"apex":"example.org","issuerName":"zerossl"}`,
			want: summary{
				Results: []string{`SEVERITY_FATAL: invalid TenantGateway spec: spec.issuerName: Unsupported value: "zerossl": supported values: "letsencrypt-prod", "letsencrypt-stage"`},
				Objects: map[string]string{},
				TTL:     DefaultTTL,
			},
		},
		"WrongFieldType": {
			reason: "A field of the wrong type is a Fatal result, never a panic",
			spec:   `{"apex":42}`,
			want: summary{
				Results: []string{"SEVERITY_FATAL: cannot decode TenantGateway tenant-root/cozystack (is every spec field of the type the XRD declares?): json: cannot unmarshal number into Go struct field TenantGatewaySpec.spec.apex of type string"},
				Objects: map[string]string{},
				TTL:     DefaultTTL,
			},
		},
		"InputNamespaceNotALabel": {
			reason: "An input namespace that is no namespace name is refused, naming the field",
			spec:   `{"apex":"example.org"}`,
			input:  resource.MustStructJSON(`{"apiVersion":"fn.gateway.cozystack.io/v1beta1","kind":"Input","certManagerNamespace":"Cert_Manager"}`),
			want: summary{
				Results: []string{`SEVERITY_FATAL: function input certManagerNamespace "Cert_Manager" is not a namespace name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
				Objects: map[string]string{},
				TTL:     DefaultTTL,
			},
		},
		"BadInput": {
			reason: "An input that cannot be read is a Fatal result naming the input kind",
			spec:   `{"apex":"example.org"}`,
			input:  resource.MustStructJSON(`{"apiVersion":"fn.gateway.cozystack.io/v1beta1","kind":"Input","certManagerNamespace":7}`),
			want: summary{
				Results: []string{"SEVERITY_FATAL: cannot read the function input (apiVersion fn.gateway.cozystack.io/v1beta1, kind Input): json: cannot unmarshal number into Go struct field Input.certManagerNamespace of type string"},
				Objects: map[string]string{},
				TTL:     DefaultTTL,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, _ := fakeCluster{served: v1TLSRoutes, objects: tc.cluster}.run(t, NewFunction(), newRequest(t, tc.spec, tc.input, tc.desired))
			if diff := cmp.Diff(tc.want, summarize(t, rsp)); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRunFunctionWrongKind(t *testing.T) {
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{
		Resource: resource.MustStructJSON(`{"apiVersion":"example.org/v1","kind":"XBucket","metadata":{"name":"b"}}`),
	}}}
	rsp, err := NewFunction(WithTTL(5*time.Second)).RunFunction(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := summary{
		Results: []string{"SEVERITY_FATAL: function-tenant-gateway composes TenantGateway.gateway.cozystack.io and XTenant.apps.cozystack.io, but the composite resource is a XBucket.example.org"},
		Objects: map[string]string{},
		TTL:     5 * time.Second,
	}
	if diff := cmp.Diff(want, summarize(t, rsp)); diff != "" {
		t.Errorf("RunFunction(XBucket): -want, +got:\n%s", diff)
	}
}

// FuzzRunFunction feeds arbitrary specs and inputs, of a TenantGateway or of
// a Tenant's XTenant, through the request decoder and the requirement loop:
// the function must answer every request and never panic.
func FuzzRunFunction(f *testing.F) {
	for _, s := range []string{`{"apex":"example.org"}`, `{"apex":42}`, `{"dns01":{"provider":"rfc2136","rfc2136":{}},"certMode":"dns01","apex":"a.b"}`, `{"attachedNamespaces":"x"}`, `null`, `{"apex":"example.org","tlsPassthroughServices":[1,{}]}`, `{"gateway":true,"host":"x.example"}`, `{"resourceQuotas":{"pods":"ten"}}`} {
		f.Add(s, `{"certManagerNamespace":"cm"}`, false)
		f.Add(s, `{}`, true)
	}
	f.Fuzz(func(t *testing.T, spec, input string, tenant bool) {
		doc := fmt.Sprintf(tgwJSON, spec)
		if tenant {
			doc = `{"apiVersion":"apps.cozystack.io/v1alpha1","kind":"XTenant","metadata":{"name":"x","labels":{"crossplane.io/claim-name":"bob","crossplane.io/claim-namespace":"tenant-root"}},"spec":` + spec + `}`
		}
		xr, err := structpb.NewStruct(nil)
		if err != nil {
			t.Fatal(err)
		}
		if xr.UnmarshalJSON([]byte(doc)) != nil {
			t.Skip("not JSON")
		}
		in := &structpb.Struct{}
		if in.UnmarshalJSON([]byte(input)) != nil {
			in = nil
		}
		req := &fnv1.RunFunctionRequest{Input: in, Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}}
		rsp, _ := fakeCluster{served: v1TLSRoutes, objects: []string{platformConfig, rootNamespace}}.run(t, NewFunction(), req)
		if rsp == nil {
			t.Fatalf("RunFunction(%s, %s) gave no response", doc, input)
		}
		fatal := false
		for _, r := range rsp.GetResults() {
			fatal = fatal || r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL
		}
		if !fatal && len(rsp.GetDesired().GetResources()) == 0 {
			t.Fatalf("RunFunction(%s) composed nothing without a Fatal result", doc)
		}
	})
}
