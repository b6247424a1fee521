package tenant

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCertManagerNamespace(t *testing.T) {
	type want struct {
		ns  string
		err string
	}
	cases := map[string]struct {
		reason string
		data   map[string]any
		want   want
	}{
		"Absent": {
			reason: "No setting keeps the function input's namespace",
			data:   map[string]any{"publishing": map[string]any{"host": "example.org"}},
			want:   want{ns: "cozy-cert-manager"},
		},
		"Empty": {
			reason: "An empty setting counts as absent",
			data:   map[string]any{"gateway": map[string]any{"certManagerNamespace": ""}},
			want:   want{ns: "cozy-cert-manager"},
		},
		"Set": {
			reason: "The setting wins over the input",
			data:   map[string]any{"gateway": map[string]any{"certManagerNamespace": "cert-manager"}},
			want:   want{ns: "cert-manager"},
		},
		"NotAName": {
			reason: "A value that is no namespace name is refused, naming the setting",
			data:   map[string]any{"gateway": map[string]any{"certManagerNamespace": "cert.manager"}},
			want:   want{err: `platform setting gateway.certManagerNamespace "cert.manager" is not a namespace name: must not contain dots`},
		},
		"NotAString": {
			reason: "A value of the wrong type is refused, naming the setting",
			data:   map[string]any{"gateway": map[string]any{"certManagerNamespace": true}},
			want:   want{err: "platform setting gateway.certManagerNamespace must be a string, not true"},
		},
		"GatewayNotAMap": {
			reason: "A gateway section that is no map holds no namespace",
			data:   map[string]any{"gateway": "cert-manager"},
			want:   want{ns: "cozy-cert-manager"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got want
			ns, err := CertManagerNamespace(tc.data, "cozy-cert-manager")
			got.ns = ns
			if err != nil {
				got.err = err.Error()
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); d != "" {
				t.Errorf("%s\nCertManagerNamespace(...): -want, +got:\n%s", tc.reason, d)
			}
		})
	}
}

func TestParsePlatform(t *testing.T) {
	t.Run("Defaults", func(t *testing.T) {
		got, err := ParsePlatform(nil)
		if err != nil {
			t.Fatal(err)
		}
		want := Platform{IngressName: "tenant-root", Solver: "http01", IssuerName: "letsencrypt-prod", ClassName: "cilium", TLSPassthroughServices: []string{"api", "vm-exportproxy", "cdi-uploadproxy"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
	})
	cases := map[string]struct {
		data map[string]any
		want string
	}{
		"Comma": {
			data: map[string]any{"gateway": map[string]any{"edgeTerminatedClasses": []any{"edge-a", "edge-b,edge-c"}}},
			want: `platform setting gateway.edgeTerminatedClasses[1] "edge-b,edge-c" holds a comma; the entries of gateway.edgeTerminatedClasses are names and are joined with commas on the way to the charts`,
		},
		"NonString": {
			data: map[string]any{"gateway": map[string]any{"tenantSelectableClasses": []any{"envoy", float64(7)}}},
			want: "platform setting gateway.tenantSelectableClasses[1] must be a string, not 7",
		},
		"NotAList": {
			data: map[string]any{"gateway": map[string]any{"attachedNamespaces": "cozy-a,cozy-b"}},
			want: "platform setting gateway.attachedNamespaces must be a list of strings, not cozy-a,cozy-b",
		},
		"NotABool": {
			data: map[string]any{"gateway": map[string]any{"enabled": "yes"}},
			want: "platform setting gateway.enabled must be true or false, not yes",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParsePlatform(tc.data)
			if err == nil || err.Error() != tc.want {
				t.Errorf("want %q, got %v", tc.want, err)
			}
		})
	}
}
