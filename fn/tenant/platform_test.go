package tenant

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
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
		"TenantNamespace": {
			reason: "As alice, whose namespace the settings name after a drift from Cozystack's cozy-cert-manager: every Gateway's port-80 listener would serve her routes in plain HTTP, so it is refused, naming the setting",
			data:   map[string]any{"gateway": map[string]any{"certManagerNamespace": "tenant-alice"}},
			want:   want{err: `platform setting gateway.certManagerNamespace "tenant-alice" names a tenant namespace (tenant-*): every Gateway's port-80 listener would serve that tenant's routes in plain HTTP; name the namespace cert-manager runs in (cozy-cert-manager on Cozystack)`},
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
	t.Run("ACMEServers", func(t *testing.T) {
		got, err := ParsePlatform(map[string]any{"publishing": map[string]any{"certificates": map[string]any{
			"issuerName": "corp-ca",
			"acmeServers": map[string]any{
				"corp-ca": map[string]any{
					"server": "https://acme.corp.example/directory", "caBundle": testCABundle, "email": "ops@example.org",
					"externalAccountBinding": map[string]any{"keyID": "kid-1", "keySecretRef": map[string]any{"name": "corp-ca-eab", "key": "hmac"}},
				},
				"pebble": map[string]any{"server": "https://pebble.test:14000/dir"},
			},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]v1alpha1.ACMEServer{"corp-ca": corpCA(), "pebble": {Server: "https://pebble.test:14000/dir"}}
		if diff := cmp.Diff(want, got.ACMEServers); diff != "" {
			t.Errorf("publishing.certificates.acmeServers: -want, +got:\n%s", diff)
		}
	})
	servers := func(v any) map[string]any {
		return map[string]any{"publishing": map[string]any{"certificates": map[string]any{"acmeServers": v}}}
	}
	cases := map[string]struct {
		data map[string]any
		want string
	}{
		"ACMEServerMisspelt": {
			data: servers(map[string]any{"corp-ca": map[string]any{"server": "https://acme.corp.example/directory", "caBunlde": testCABundle}}),
			want: `platform setting publishing.certificates.acmeServers[corp-ca]: json: unknown field "caBunlde"`,
		},
		"ACMEServerWrongType": {
			data: servers(map[string]any{"a": map[string]any{"server": "https://a.example/dir"}, "b": map[string]any{"externalAccountBinding": "kid-1"}, "c": map[string]any{"x": 1}}),
			want: "platform setting publishing.certificates.acmeServers[b]: json: cannot unmarshal string into Go struct field ACMEServer.externalAccountBinding of type v1alpha1.ExternalAccountBinding",
		},
		"ACMEServersAList": {
			data: servers([]any{map[string]any{"name": "corp-ca", "server": "https://acme.corp.example/directory"}}),
			want: "platform setting publishing.certificates.acmeServers must map the names of ACME servers to their settings (server, caBundle, externalAccountBinding, email)",
		},
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

func TestParseInfrastructure(t *testing.T) {
	cases := map[string]struct {
		data    map[string]any
		want    map[string]Pin
		wantErr string
	}{
		"Pins": {
			data: map[string]any{"gateway": map[string]any{"infrastructure": map[string]any{
				"tenant-root": map[string]any{"annotations": map[string]any{"lbipam.cilium.io/ips": "198.51.100.10"}, "addresses": []any{map[string]any{"value": "198.51.100.10"}}},
			}}},
			want: map[string]Pin{"tenant-root": {Annotations: map[string]string{"lbipam.cilium.io/ips": "198.51.100.10"}, Addresses: []v1alpha1.GatewayAddress{{Value: "198.51.100.10"}}}},
		},
		"Misspelt": {
			data:    map[string]any{"gateway": map[string]any{"infrastructure": map[string]any{"tenant-root": map[string]any{"annotation": map[string]any{}}}}},
			wantErr: `platform setting gateway.infrastructure[tenant-root]: json: unknown field "annotation"`,
		},
		"NotAMap": {
			data:    map[string]any{"gateway": map[string]any{"infrastructure": []any{"x"}}},
			wantErr: "platform setting gateway.infrastructure must map owning tenants' namespaces to labels, annotations and addresses for their Gateways",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := ParsePlatform(tc.data)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Fatalf("error -want, +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, p.Infrastructure); err == nil && diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}
