package jsonobj

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestManifest(t *testing.T) {
	cases := map[string]struct {
		obj  any
		want string
	}{
		"NamespaceKeepsOnlyNameLabelAndAnnotation": {
			obj: corev1.Namespace{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
				ObjectMeta: metav1.ObjectMeta{Name: "cozy-dashboard", Labels: map[string]string{"l": "v"}, Annotations: map[string]string{"a": "v"}},
			},
			want: `{"apiVersion":"v1","kind":"Namespace","metadata":{"annotations":{"a":"v"},"labels":{"l":"v"},"name":"cozy-dashboard"}}`,
		},
		"ReleasedNamespaceIsOnlyItsName": {
			obj:  corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "cozy-old"}},
			want: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"cozy-old"}}`,
		},
		"NonEmptySpecStays": {
			obj: corev1.ResourceQuota{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
				ObjectMeta: metav1.ObjectMeta{Name: "tenant-quota", Namespace: "tenant-alice"},
				Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"cpu": resource.MustParse("4")}},
			},
			want: `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"tenant-quota","namespace":"tenant-alice"},"spec":{"hard":{"cpu":"4"}}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Manifest(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("Manifest(): -want, +got:\n%s", diff)
			}
		})
	}
	if _, err := Manifest([]string{"not", "an", "object"}); err == nil || !strings.Contains(err.Error(), "must be a JSON object") {
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
