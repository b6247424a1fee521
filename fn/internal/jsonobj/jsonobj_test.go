package jsonobj

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestManifest(t *testing.T) {
	cases := map[string]struct {
		obj  any
		want string
	}{
		"NamespaceKeepsOnlyNameLabelAndAnnotation": {
			obj: &corev1.Namespace{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
				ObjectMeta: metav1.ObjectMeta{Name: "cozy-dashboard", Labels: map[string]string{"l": "v"}, Annotations: map[string]string{"a": "v"}},
			},
			want: `{"apiVersion":"v1","kind":"Namespace","metadata":{"annotations":{"a":"v"},"labels":{"l":"v"},"name":"cozy-dashboard"}}`,
		},
		"ReleasedNamespaceIsOnlyItsName": {
			obj:  &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "cozy-old"}},
			want: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"cozy-old"}}`,
		},
		"NonEmptySpecStays": {
			obj: &corev1.ResourceQuota{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
				ObjectMeta: metav1.ObjectMeta{Name: "tenant-quota", Namespace: "tenant-alice"},
				Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"cpu": resource.MustParse("4")}},
			},
			want: `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"tenant-quota","namespace":"tenant-alice"},"spec":{"hard":{"cpu":"4"}}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := Manifest(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, strings.TrimSpace(string(got))); diff != "" {
				t.Errorf("Manifest(): -want, +got:\n%s", diff)
			}
		})
	}
	if _, err := Manifest([]string{"not", "an", "object"}); err == nil || !strings.Contains(err.Error(), "must be a pointer to an object") {
		t.Errorf("Manifest(list): want an error saying a manifest must be an object, got %v", err)
	}
}

func TestDecodeNamesTheField(t *testing.T) {
	var into struct {
		Spec struct {
			Apex string `json:"apex"`
		} `json:"spec"`
	}
	err := Decode(map[string]any{"spec": map[string]any{"apex": 42}}, &into)
	if err == nil || !strings.Contains(err.Error(), "spec.apex") {
		t.Errorf("Decode(): want an error naming spec.apex, got %v", err)
	}
}

func TestDecodeStrict(t *testing.T) {
	type server struct {
		Server   string `json:"server"`
		CABundle string `json:"caBundle,omitempty"`
	}
	cases := map[string]struct {
		reason string
		in     any
		want   server
		err    string
	}{
		"Known": {
			reason: "Known fields decode as Decode decodes them",
			in:     map[string]any{"server": "https://acme.example.org/directory", "caBundle": "pem"},
			want:   server{Server: "https://acme.example.org/directory", CABundle: "pem"},
		},
		"Misspelt": {
			reason: "A field the type does not have is refused, naming it",
			in:     map[string]any{"server": "https://acme.example.org/directory", "caBunlde": "pem"},
			err:    `json: unknown field "caBunlde"`,
		},
		"WrongType": {
			reason: "A field of the wrong type is refused, naming it",
			in:     map[string]any{"server": 42},
			err:    "json: cannot unmarshal number into Go struct field server.server of type string",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got server
			err := DecodeStrict(tc.in, &got)
			var msg string
			if err != nil {
				msg = err.Error()
			}
			if diff := cmp.Diff(tc.err, msg); diff != "" {
				t.Errorf("%s\nerror: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); err == nil && diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestManifestIsEncodingJSON holds Manifest, which converts with the
// unstructured converter, to what encoding/json makes of the same objects
// (less status, creationTimestamp and an empty spec), for every kind the
// function writes through an Object: pointers, int32 ports, quantities,
// byte data, empty and omitted fields.
func TestManifestIsEncodingJSON(t *testing.T) {
	port := gwapiv1.PortNumber(8080)
	section := gwapiv1.SectionName("https-alice")
	objs := map[string]any{
		"HTTPRoute": &gwapiv1.HTTPRoute{
			TypeMeta:   metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute"},
			ObjectMeta: metav1.ObjectMeta{Name: "guard", Namespace: "tenant-alice", Labels: map[string]string{"a": "b"}},
			Spec: gwapiv1.HTTPRouteSpec{
				CommonRouteSpec: gwapiv1.CommonRouteSpec{ParentRefs: []gwapiv1.ParentReference{{Name: "gw", SectionName: &section, Port: &port}}},
				Hostnames:       []gwapiv1.Hostname{"*.alice.example.org"},
				Rules: []gwapiv1.HTTPRouteRule{{
					Matches:     []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{Type: ptr.To(gwapiv1.PathMatchExact), Value: ptr.To("/x")}}},
					BackendRefs: []gwapiv1.HTTPBackendRef{{BackendRef: gwapiv1.BackendRef{BackendObjectReference: gwapiv1.BackendObjectReference{Name: "svc", Port: &port}, Weight: ptr.To[int32](0)}}},
				}, {}},
			},
		},
		"ConfigMap": &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "report", Namespace: "tenant-alice"},
			Data:       map[string]string{"summary": "2 routes", "empty": ""},
		},
		"Secret": &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: "replica", Namespace: "tenant-alice", Finalizers: []string{"f"}},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{"tls.crt": []byte("crt\x00\xff"), "tls.key": {}},
		},
		"ResourceQuota": &corev1.ResourceQuota{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
			ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "tenant-alice"},
			Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"cpu": resource.MustParse("1500m"), "memory": resource.MustParse("4Gi")}},
		},
		"Namespace": &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: "tenant-alice", Labels: map[string]string{}, Annotations: nil},
		},
	}
	for name, obj := range objs {
		t.Run(name, func(t *testing.T) {
			want := viaEncodingJSON(t, obj)
			m, err := Manifest(obj)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, strings.TrimSpace(string(got))); diff != "" {
				t.Errorf("Manifest(%s): -encoding/json, +got:\n%s", name, diff)
			}
		})
	}
}

// viaEncodingJSON is a manifest as encoding/json sees the object.
func viaEncodingJSON(t *testing.T, obj any) string {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	if spec, ok := m["spec"].(map[string]any); ok && len(spec) == 0 {
		delete(m, "spec")
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
