package fn

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// TestToComposedOwnsOnlyWhatItMeans checks that the composed objects carry no
// status and none of the zero-valued fields the typed structs always emit:
// with server-side apply, each would be an opinion the function then owns.
func TestToComposedOwnsOnlyWhatItMeans(t *testing.T) {
	out, err := gateway.Compose(gateway.Input{Name: "cozystack", Namespace: "tenant-root", CertManagerNamespace: "cozy-cert-manager",
		Spec: v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeDNS01, DNS01: &v1alpha1.DNS01{
			Provider: v1alpha1.DNS01Route53, Route53: &v1alpha1.Route53Provider{Region: "eu-west-1"},
		}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, r := range out.Resources {
		cd, err := toComposed(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cd.Object["status"]; ok {
			t.Errorf("%s carries a status", r.Key)
		}
		got[r.Key] = cd.Object["spec"]
	}
	wantIssuer := map[string]any{"acme": map[string]any{
		"server":              gateway.ACMEServerProd,
		"privateKeySecretRef": map[string]any{"name": "cozystack-acme-account"},
		"solvers":             []any{map[string]any{"dns01": map[string]any{"route53": map[string]any{"region": "eu-west-1"}}}},
	}}
	if diff := cmp.Diff(wantIssuer, got["issuer"]); diff != "" {
		t.Errorf("issuer spec: -want, +got:\n%s", diff)
	}
	wantCert := map[string]any{
		"secretName": "cozystack-gateway-tls",
		"issuerRef":  map[string]any{"kind": "Issuer", "name": "cozystack-gateway"},
		"dnsNames":   []any{"example.org", "*.example.org"},
	}
	if diff := cmp.Diff(wantCert, got["certificate-wildcard"]); diff != "" {
		t.Errorf("certificate spec: -want, +got:\n%s", diff)
	}
}

// TestWriteDesired: the composed resources overlay those of earlier
// pipeline steps, each marked ready or not; the status merges into what
// earlier steps wrote, without the fields left empty; unready holds the XR
// not ready whatever its resources say.
func TestWriteDesired(t *testing.T) {
	type got struct {
		Resources map[string]string
		Status    map[string]any
		Ready     string
	}
	cases := map[string]struct {
		unready bool
		want    got
	}{
		"Ready": {want: got{
			Resources: map[string]string{"earlier": "READY_UNSPECIFIED", "namespace": "READY_TRUE", "quota": "READY_FALSE"},
			Status:    map[string]any{"earlier": "kept", "namespace": "tenant-bob", "apex": "bob.example.org"},
			Ready:     "READY_UNSPECIFIED",
		}},
		"Unready": {unready: true, want: got{
			Resources: map[string]string{"earlier": "READY_UNSPECIFIED", "namespace": "READY_TRUE", "quota": "READY_FALSE"},
			Status:    map[string]any{"earlier": "kept", "namespace": "tenant-bob", "apex": "bob.example.org"},
			Ready:     "READY_FALSE",
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{Desired: &fnv1.State{
				Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"apps.cozystack.io/v1alpha1","kind":"XTenant","status":{"earlier":"kept"}}`)},
				Resources: map[string]*fnv1.Resource{"earlier": {Resource: resource.MustStructJSON(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)}},
			}}
			rsp := response.To(req, DefaultTTL)
			resources := []kube.Resource{
				{Key: "namespace", Object: &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "tenant-bob"}}},
				{Key: "quota", Object: &corev1.ResourceQuota{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"}, ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "tenant-bob"}}},
			}
			if err := setComposed(req, rsp, resources, map[string]bool{"namespace": true}); err != nil {
				t.Fatal(err)
			}
			if err := writeStatus(req, rsp, &appsv1alpha1.TenantStatus{Namespace: "tenant-bob", Apex: "bob.example.org"}, tc.unready); err != nil {
				t.Fatal(err)
			}
			if err := DecodeDesired(rsp); err != nil {
				t.Fatal(err)
			}
			g := got{Resources: map[string]string{}, Ready: rsp.GetDesired().GetComposite().GetReady().String()}
			for k, r := range rsp.GetDesired().GetResources() {
				g.Resources[k] = r.GetReady().String()
			}
			g.Status, _ = rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}

// TestSetCondition: True or False, with reason and message, for the target
// the caller picks.
func TestSetCondition(t *testing.T) {
	rsp := &fnv1.RunFunctionResponse{}
	setCondition(rsp, "Accepted", "Derived", true, "fine").TargetCompositeAndClaim()
	setCondition(rsp, "GatewayReady", "Creating", false, "not yet").TargetComposite()
	want := []*fnv1.Condition{
		{Type: "Accepted", Status: fnv1.Status_STATUS_CONDITION_TRUE, Reason: "Derived", Message: ptr.To("fine"), Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()},
		{Type: "GatewayReady", Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: "Creating", Message: ptr.To("not yet"), Target: fnv1.Target_TARGET_COMPOSITE.Enum()},
	}
	if diff := cmp.Diff(want, rsp.GetConditions(), protocmp.Transform()); diff != "" {
		t.Errorf("-want, +got:\n%s", diff)
	}
}
