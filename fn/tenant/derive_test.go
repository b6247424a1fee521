package tenant

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

func platform() Platform {
	p, err := ParsePlatform(map[string]any{
		"publishing": map[string]any{"host": "example.org", "exposedServices": []any{"dashboard", "api"}},
		"gateway": map[string]any{
			"enabled": true, "tenantSelectableClasses": []any{"envoy", "edge-tunnel"}, "edgeTerminatedClasses": []any{"edge-tunnel"},
			"attachedNamespaces": []any{"cozy-dashboard"},
		},
	})
	if err != nil {
		panic(err)
	}
	return p
}

var yes = func() *bool { b := true; return &b }()

// testCABundle is a self-signed ed25519 CA certificate: the CA of a
// platform's own ACME directory (the one examples/acme-server carries).
var testCABundle = func() string {
	b, err := os.ReadFile("../../test/testdata/acme-ca.pem")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// corpCA is a platform's own ACME server with everything set.
func corpCA() v1alpha1.ACMEServer {
	return v1alpha1.ACMEServer{
		Server: "https://acme.corp.example/directory", CABundle: testCABundle, Email: "ops@example.org",
		ExternalAccountBinding: &v1alpha1.ExternalAccountBinding{KeyID: "kid-1", KeySecretRef: &v1alpha1.SecretKeySelector{Name: "corp-ca-eab", Key: "hmac"}},
	}
}

// corpCAJSON is corpCA as the TenantGateway's spec.acme.
var corpCAJSON = `{"caBundle":` + func() string { b, _ := json.Marshal(testCABundle); return string(b) }() +
	`,"email":"ops@example.org","externalAccountBinding":{"keyID":"kid-1","keySecretRef":{"key":"hmac","name":"corp-ca-eab"}},"server":"https://acme.corp.example/directory"}`

// view is what an operator notices of a derivation: status, labels and the
// TenantGateway spec (as JSON), or the refusal.
type view struct {
	Status  appsv1alpha1.TenantStatus
	Labels  map[string]string
	Gateway string
	Quota   string
	Refused string
}

func derive(t *testing.T, in Input) view {
	t.Helper()
	out, err := Derive(in)
	if err != nil {
		return view{Refused: err.Error()}
	}
	v := view{Status: out.Status}
	for _, r := range out.Resources {
		switch r.Key {
		case KeyNamespace:
			v.Labels = r.Object.GetLabels()
			if in.Name == RootTenant {
				v.Labels = manifest(t, r)["metadata"].(map[string]any)["labels"].(map[string]string)
			}
		case KeyTenantGateway:
			b, _ := json.Marshal(manifest(t, r)["spec"])
			v.Gateway = string(b)
		case KeyResourceQuota:
			b, _ := json.Marshal(manifest(t, r)["spec"])
			v.Quota = string(b)
		}
	}
	return v
}

func manifest(t *testing.T, r kube.Resource) map[string]any {
	t.Helper()
	raw, err := json.Marshal(r.Object)
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		Spec struct {
			ForProvider struct {
				Manifest map[string]any `json:"manifest"`
			} `json:"forProvider"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	m := o.Spec.ForProvider.Manifest
	if md, ok := m["metadata"].(map[string]any); ok {
		if l, ok := md["labels"].(map[string]any); ok {
			labels := map[string]string{}
			for k, v := range l {
				labels[k] = v.(string)
			}
			md["labels"] = labels
		}
	}
	return m
}

func TestDerive(t *testing.T) {
	rootLabels := map[string]string{kube.LabelNamespaceGateway: "tenant-root", kube.LabelNamespaceHost: "example.org"}
	host := func(h string) map[string]string { return map[string]string{kube.LabelNamespaceHost: h} }
	with := func(p Platform, f func(*Platform)) Platform { f(&p); return p }
	cases := map[string]struct {
		reason string
		in     Input
		want   view
	}{
		"Alice": {
			reason: "spec {} under tenant-root: tenant-alice, alice.example.org, inheriting tenant-root's Gateway",
			in:     Input{Name: "alice", Parent: "tenant-root", ParentLabels: rootLabels, Platform: platform()},
			want: view{
				Status: appsv1alpha1.TenantStatus{Namespace: "tenant-alice", Apex: "alice.example.org", GatewayNamespace: "tenant-root"},
				Labels: map[string]string{kube.LabelNamespaceHost: "alice.example.org", kube.LabelNamespaceGateway: "tenant-root"},
			},
		},
		"Acme": {
			reason: "its own host and Gateway: http01 with the platform's issuer, nothing of the publishing tenant's",
			in:     Input{Name: "acme", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Host: "customer1.example", Gateway: yes}, ParentLabels: rootLabels, Platform: platform()},
			want: view{
				Status:  appsv1alpha1.TenantStatus{Namespace: "tenant-acme", Apex: "customer1.example", GatewayNamespace: "tenant-acme", GatewayClassName: "cilium", CertMode: "http01"},
				Labels:  map[string]string{kube.LabelNamespaceHost: "customer1.example", kube.LabelNamespaceGateway: "tenant-acme"},
				Gateway: `{"apex":"customer1.example","certMode":"http01","gatewayClassName":"cilium","issuerName":"letsencrypt-prod"}`,
			},
		},
		"AcmePinned": {
			reason: "the platform settings pin tenant-acme's Gateway: Cilium's LB-IPAM annotation and an address, carried into its TenantGateway",
			in: Input{Name: "acme", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Host: "customer1.example", Gateway: yes}, ParentLabels: rootLabels, Platform: with(platform(), func(p *Platform) {
				p.Infrastructure = map[string]Pin{
					"tenant-acme":  {Annotations: map[string]string{"lbipam.cilium.io/ips": "198.51.100.10"}, Addresses: []v1alpha1.GatewayAddress{{Value: "198.51.100.10"}}},
					"tenant-other": {Labels: map[string]string{"pool": "other"}},
				}
			})},
			want: view{
				Status:  appsv1alpha1.TenantStatus{Namespace: "tenant-acme", Apex: "customer1.example", GatewayNamespace: "tenant-acme", GatewayClassName: "cilium", CertMode: "http01"},
				Labels:  map[string]string{kube.LabelNamespaceHost: "customer1.example", kube.LabelNamespaceGateway: "tenant-acme"},
				Gateway: `{"addresses":[{"value":"198.51.100.10"}],"apex":"customer1.example","certMode":"http01","gatewayClassName":"cilium","infrastructure":{"annotations":{"lbipam.cilium.io/ips":"198.51.100.10"}},"issuerName":"letsencrypt-prod"}`,
			},
		},
		"NestedOwnApex": {
			reason: "three levels down, an owning tenant an administrator gave its own apex (tenant-host-policy lets only trusted callers set spec.host): customer1.example, as for a direct child",
			in: Input{Name: "acme", Parent: "tenant-alice-x", Spec: appsv1alpha1.TenantSpec{Host: "customer1.example", Gateway: yes},
				ParentLabels: map[string]string{kube.LabelNamespaceGateway: "tenant-root", kube.LabelNamespaceHost: "x.alice.example.org"}, Platform: platform()},
			want: view{
				Status:  appsv1alpha1.TenantStatus{Namespace: "tenant-alice-x-acme", Apex: "customer1.example", GatewayNamespace: "tenant-alice-x-acme", GatewayClassName: "cilium", CertMode: "http01"},
				Labels:  map[string]string{kube.LabelNamespaceHost: "customer1.example", kube.LabelNamespaceGateway: "tenant-alice-x-acme"},
				Gateway: `{"apex":"customer1.example","certMode":"http01","gatewayClassName":"cilium","issuerName":"letsencrypt-prod"}`,
			},
		},
		"Nested": {
			reason: "two levels down: <parent>-<name>, apex under the parent's, the parent's gateway label inherited",
			in:     Input{Name: "bob", Parent: "tenant-alice", ParentLabels: map[string]string{kube.LabelNamespaceGateway: "tenant-root", kube.LabelNamespaceHost: "alice.example.org"}, Platform: platform()},
			want: view{
				Status: appsv1alpha1.TenantStatus{Namespace: "tenant-alice-bob", Apex: "bob.alice.example.org", GatewayNamespace: "tenant-root"},
				Labels: map[string]string{kube.LabelNamespaceHost: "bob.alice.example.org", kube.LabelNamespaceGateway: "tenant-root"},
			},
		},
		"NoGatewayAbove": {
			reason: "no ancestor owns a Gateway: no gateway label at all",
			in:     Input{Name: "bob", Parent: "tenant-alice", ParentLabels: host("alice.example.org"), Platform: platform()},
			want: view{
				Status: appsv1alpha1.TenantStatus{Namespace: "tenant-alice-bob", Apex: "bob.alice.example.org"},
				Labels: map[string]string{kube.LabelNamespaceHost: "bob.alice.example.org"},
			},
		},
		"RootPublishing": {
			reason: "the root tenant is its own namespace, its apex is publishing.host, and its Gateway alone gets attached namespaces and exposed passthrough services",
			in:     Input{Name: "root", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, Platform: platform()},
			want: view{
				Status:  appsv1alpha1.TenantStatus{Namespace: "tenant-root", Apex: "example.org", GatewayNamespace: "tenant-root", GatewayClassName: "cilium", CertMode: "http01"},
				Labels:  map[string]string{kube.LabelNamespaceHost: "example.org", kube.LabelNamespaceGateway: "tenant-root"},
				Gateway: `{"apex":"example.org","attachedNamespaces":["cozy-dashboard"],"certMode":"http01","gatewayClassName":"cilium","issuerName":"letsencrypt-prod","tlsPassthroughServices":["api"]}`,
			},
		},
		"RootWithoutGatewayEnabled": {
			reason: "passthrough services only while gateway.enabled",
			in:     Input{Name: "root", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, Platform: with(platform(), func(p *Platform) { p.GatewayEnabled = false })},
			want: view{
				Status:  appsv1alpha1.TenantStatus{Namespace: "tenant-root", Apex: "example.org", GatewayNamespace: "tenant-root", GatewayClassName: "cilium", CertMode: "http01"},
				Labels:  map[string]string{kube.LabelNamespaceHost: "example.org", kube.LabelNamespaceGateway: "tenant-root"},
				Gateway: `{"apex":"example.org","attachedNamespaces":["cozy-dashboard"],"certMode":"http01","gatewayClassName":"cilium","issuerName":"letsencrypt-prod"}`,
			},
		},
		"EdgeClass": {
			reason: "an edge-terminated class wins over everything: certMode edge",
			in:     Input{Name: "carol", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes, GatewayClass: "edge-tunnel"}, ParentLabels: rootLabels, Platform: with(platform(), func(p *Platform) { p.WildcardSecret = "w" })},
			want: view{
				Status:  appsv1alpha1.TenantStatus{Namespace: "tenant-carol", Apex: "carol.example.org", GatewayNamespace: "tenant-carol", GatewayClassName: "edge-tunnel", CertMode: "edge"},
				Labels:  map[string]string{kube.LabelNamespaceHost: "carol.example.org", kube.LabelNamespaceGateway: "tenant-carol"},
				Gateway: `{"apex":"carol.example.org","certMode":"edge","gatewayClassName":"edge-tunnel"}`,
			},
		},
		"WildcardSecretSkipsSolver": {
			reason: "a wildcard Secret selects existingSecret; an unsupported solver and issuer are not read",
			in: Input{Name: "dave", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(platform(), func(p *Platform) {
				p.WildcardSecret, p.Solver, p.IssuerName = "wild", "tls-alpn01", "zerossl"
			})},
			want: view{
				Status:  appsv1alpha1.TenantStatus{Namespace: "tenant-dave", Apex: "dave.example.org", GatewayNamespace: "tenant-dave", GatewayClassName: "cilium", CertMode: "existingSecret"},
				Labels:  map[string]string{kube.LabelNamespaceHost: "dave.example.org", kube.LabelNamespaceGateway: "tenant-dave"},
				Gateway: `{"apex":"dave.example.org","certMode":"existingSecret","gatewayClassName":"cilium","wildcardSecretRef":{"name":"wild"}}`,
			},
		},
		"NamespaceFitsExactly": {
			reason: "a 56-character name makes tenant-<name> exactly 63 characters, and a short parent host keeps the host label under 63: allowed",
			in:     Input{Name: strings.Repeat("a", 56), Parent: "tenant-root", ParentLabels: map[string]string{kube.LabelNamespaceGateway: "tenant-root", kube.LabelNamespaceHost: "ex.io"}, Platform: platform()},
			want: view{
				Status: appsv1alpha1.TenantStatus{Namespace: "tenant-" + strings.Repeat("a", 56), Apex: strings.Repeat("a", 56) + ".ex.io", GatewayNamespace: "tenant-root"},
				Labels: map[string]string{kube.LabelNamespaceHost: strings.Repeat("a", 56) + ".ex.io", kube.LabelNamespaceGateway: "tenant-root"},
			},
		},
		"HostFitsExactly": {
			reason: "a spec.host of 63 characters is the longest label value: allowed",
			in:     Input{Name: "acme", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Host: strings.Repeat("h", 55) + ".example"}, ParentLabels: rootLabels, Platform: platform()},
			want: view{
				Status: appsv1alpha1.TenantStatus{Namespace: "tenant-acme", Apex: strings.Repeat("h", 55) + ".example", GatewayNamespace: "tenant-root"},
				Labels: map[string]string{kube.LabelNamespaceHost: strings.Repeat("h", 55) + ".example", kube.LabelNamespaceGateway: "tenant-root"},
			},
		},
		"DNS01AndQuota": {
			reason: "dns01 copies only the selected provider's block; resourceQuotas become a ResourceQuota",
			in: Input{Name: "frank", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes, ResourceQuotas: map[string]resource.Quantity{"count/certificates.cert-manager.io": resource.MustParse("10")}}, ParentLabels: rootLabels, Platform: with(platform(), func(p *Platform) {
				p.Solver = "dns01"
				p.DNS01 = &v1alpha1.DNS01{Provider: "route53", Route53: &v1alpha1.Route53Provider{Region: "eu-west-1"}, Cloudflare: &v1alpha1.CloudflareProvider{}}
			})},
			want: view{
				Status:  appsv1alpha1.TenantStatus{Namespace: "tenant-frank", Apex: "frank.example.org", GatewayNamespace: "tenant-frank", GatewayClassName: "cilium", CertMode: "dns01"},
				Labels:  map[string]string{kube.LabelNamespaceHost: "frank.example.org", kube.LabelNamespaceGateway: "tenant-frank"},
				Gateway: `{"apex":"frank.example.org","certMode":"dns01","dns01":{"provider":"route53","route53":{"region":"eu-west-1"}},"gatewayClassName":"cilium","issuerName":"letsencrypt-prod"}`,
				Quota:   `{"hard":{"count/certificates.cert-manager.io":"10"}}`,
			},
		},
		"OwnACMEServer": {
			reason: "issuerName names a server of the platform's: the TenantGateway carries it whole in spec.acme, under that name",
			in: Input{Name: "acme", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(platform(), func(p *Platform) {
				p.IssuerName = "corp-ca"
				p.ACMEServers = map[string]v1alpha1.ACMEServer{"corp-ca": corpCA(), "other": {Server: "https://other.example/dir"}}
			})},
			want: view{
				Status:  appsv1alpha1.TenantStatus{Namespace: "tenant-acme", Apex: "acme.example.org", GatewayNamespace: "tenant-acme", GatewayClassName: "cilium", CertMode: "http01"},
				Labels:  map[string]string{kube.LabelNamespaceHost: "acme.example.org", kube.LabelNamespaceGateway: "tenant-acme"},
				Gateway: `{"acme":` + corpCAJSON + `,"apex":"acme.example.org","certMode":"http01","gatewayClassName":"cilium","issuerName":"corp-ca"}`,
			},
		},
		"OwnACMEServerDNS01": {
			reason: "dns01 takes the platform's server the same way, beside its provider",
			in: Input{Name: "frank", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(platform(), func(p *Platform) {
				p.Solver, p.IssuerName = "dns01", "pebble"
				p.ACMEServers = map[string]v1alpha1.ACMEServer{"pebble": {Server: "https://pebble.test:14000/dir"}}
			})},
			want: view{
				Status:  appsv1alpha1.TenantStatus{Namespace: "tenant-frank", Apex: "frank.example.org", GatewayNamespace: "tenant-frank", GatewayClassName: "cilium", CertMode: "dns01"},
				Labels:  map[string]string{kube.LabelNamespaceHost: "frank.example.org", kube.LabelNamespaceGateway: "tenant-frank"},
				Gateway: `{"acme":{"server":"https://pebble.test:14000/dir"},"apex":"frank.example.org","certMode":"dns01","dns01":{"cloudflare":{"apiTokenSecretRef":{"key":"api-token","name":"cloudflare-api-token-secret"}},"provider":"cloudflare"},"gatewayClassName":"cilium","issuerName":"pebble"}`,
			},
		},
		"BuiltinBesideBrokenServer": {
			reason: "a built-in issuer reads no server of the settings: an entry nobody names, broken or not, stops no tenant",
			in: Input{Name: "acme", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(platform(), func(p *Platform) {
				p.IssuerName = "letsencrypt-stage"
				p.ACMEServers = map[string]v1alpha1.ACMEServer{"broken": {Server: "http://acme.corp.example", CABundle: "not PEM"}}
			})},
			want: view{
				Status:  appsv1alpha1.TenantStatus{Namespace: "tenant-acme", Apex: "acme.example.org", GatewayNamespace: "tenant-acme", GatewayClassName: "cilium", CertMode: "http01"},
				Labels:  map[string]string{kube.LabelNamespaceHost: "acme.example.org", kube.LabelNamespaceGateway: "tenant-acme"},
				Gateway: `{"apex":"acme.example.org","certMode":"http01","gatewayClassName":"cilium","issuerName":"letsencrypt-stage"}`,
			},
		},
		"DNS01ChartDefaults": {
			reason: "platform values brought over from the reference chart name only the solver: cloudflare with the chart's token Secret, as that chart derives it",
			in: Input{Name: "frank", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(platform(), func(p *Platform) {
				p.Solver = "dns01"
			})},
			want: view{
				Status:  appsv1alpha1.TenantStatus{Namespace: "tenant-frank", Apex: "frank.example.org", GatewayNamespace: "tenant-frank", GatewayClassName: "cilium", CertMode: "dns01"},
				Labels:  map[string]string{kube.LabelNamespaceHost: "frank.example.org", kube.LabelNamespaceGateway: "tenant-frank"},
				Gateway: `{"apex":"frank.example.org","certMode":"dns01","dns01":{"cloudflare":{"apiTokenSecretRef":{"key":"api-token","name":"cloudflare-api-token-secret"}},"provider":"cloudflare"},"gatewayClassName":"cilium","issuerName":"letsencrypt-prod"}`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, derive(t, tc.in)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	rootLabels := map[string]string{kube.LabelNamespaceGateway: "tenant-root", kube.LabelNamespaceHost: "example.org"}
	with := func(f func(*Platform)) Platform { p := platform(); f(&p); return p }
	cases := map[string]struct {
		reason string
		in     Input
		want   string
	}{
		"NameWithDash": {
			in:   Input{Name: "my-team", Parent: "tenant-root", Platform: platform()},
			want: `tenant name "my-team" must be a DNS label without '-' (a-z and 0-9, at most 63 characters): '-' joins the names of nested tenants into namespace names`,
		},
		"NameOf63Characters": {
			in:   Input{Name: strings.Repeat("a", 63), Parent: "tenant-root", ParentLabels: rootLabels, Platform: platform()},
			want: `namespace name "tenant-` + strings.Repeat("a", 63) + `" (from 'tenant-' and the tenant name) is 70 characters, over the limit of 63: choose a shorter tenant name`,
		},
		"NameOneOverTheNamespaceLimit": {
			in:   Input{Name: strings.Repeat("a", 57), Parent: "tenant-root", ParentLabels: map[string]string{kube.LabelNamespaceHost: "ex.io"}, Platform: platform()},
			want: `namespace name "tenant-` + strings.Repeat("a", 57) + `" (from 'tenant-' and the tenant name) is 64 characters, over the limit of 63: choose a shorter tenant name`,
		},
		"NestedNamespaceOverflows": {
			reason: "each name fits, but the parent namespace (48 characters), '-' and the name (15) make 64",
			in:     Input{Name: strings.Repeat("b", 15), Parent: "tenant-" + strings.Repeat("a", 41), ParentLabels: map[string]string{kube.LabelNamespaceHost: "ex.io"}, Platform: platform()},
			want:   `namespace name "tenant-` + strings.Repeat("a", 41) + "-" + strings.Repeat("b", 15) + `" (from the parent namespace tenant-` + strings.Repeat("a", 41) + `, '-' and the tenant name) is 64 characters, over the limit of 63: choose a shorter tenant name`,
		},
		"DerivedHostOverflows": {
			reason: "the namespace fits, but <name>.example.org is 64 characters, too long for the host label",
			in:     Input{Name: strings.Repeat("a", 52), Parent: "tenant-root", ParentLabels: rootLabels, Platform: platform()},
			want:   `namespace label namespace.cozystack.io/host "` + strings.Repeat("a", 52) + `.example.org" (from the tenant name under the parent's host example.org) is 64 characters, over the limit of 63: choose a shorter tenant name or set spec.host`,
		},
		"SpecHostOverflows": {
			in:   Input{Name: "acme", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Host: strings.Repeat("h", 56) + ".example"}, ParentLabels: rootLabels, Platform: platform()},
			want: `namespace label namespace.cozystack.io/host "` + strings.Repeat("h", 56) + `.example" (from spec.host) is 64 characters, over the limit of 63: set a shorter spec.host`,
		},
		"PublishingHostOverflows": {
			in:   Input{Name: "root", Parent: "tenant-root", Platform: func() Platform { p := platform(); p.Host = strings.Repeat("p", 60) + ".org"; return p }()},
			want: `namespace label namespace.cozystack.io/host "` + strings.Repeat("p", 60) + `.org" (from platform setting publishing.host) is 64 characters, over the limit of 63: shorten publishing.host`,
		},
		"PublishingHostNotALabelValue": {
			reason: "publishing.host comes from the platform settings, which no schema checks: a wildcard cannot be a label value",
			in:     Input{Name: "root", Parent: "tenant-root", Platform: func() Platform { p := platform(); p.Host = "*.example.org"; return p }()},
			want:   `namespace label namespace.cozystack.io/host "*.example.org" (from platform setting publishing.host, 13 characters, at most 63) is invalid: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
		},
		"PinRefused": {
			reason: "A pin the Gateway API schema would refuse is refused on the Tenant, naming the platform setting and each field",
			in: Input{Name: "acme", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Host: "customer1.example", Gateway: yes}, ParentLabels: rootLabels, Platform: func() Platform {
				p := platform()
				p.Infrastructure = map[string]Pin{"tenant-acme": {Labels: map[string]string{"pool": "a b"}, Addresses: []v1alpha1.GatewayAddress{{Value: "pool-a"}}}}
				return p
			}()},
			want: `platform setting gateway.infrastructure[tenant-acme] cannot pin the Gateway: [gateway.infrastructure[tenant-acme].labels[pool]: Invalid value: "a b": label value: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), gateway.infrastructure[tenant-acme].addresses[0].value: Invalid value: "pool-a": type IPAddress needs an IPv4 or IPv6 address, such as 198.51.100.10]`,
		},
		"NestedHostInSiblingZone": {
			reason: "A nested tenant's spec.host must stay in its parent's zone, whatever the admission policies do: the host label is a delegation",
			in: Input{Name: "evil", Parent: "tenant-alice", Spec: appsv1alpha1.TenantSpec{Host: "shop.bob.example.org"},
				ParentLabels: map[string]string{kube.LabelNamespaceHost: "alice.example.org", kube.LabelNamespaceGateway: "tenant-root"}, Platform: platform()},
			want: `spec.host "shop.bob.example.org" must equal or be under the parent tenant's host "alice.example.org" (namespace tenant-alice): a nested tenant is delegated only part of its parent's zone; only a tenant with its own Gateway (spec.gateway) may be given an apex of its own outside the platform's zone "example.org"`,
		},
		"NestedOwnerHostInSiblingZone": {
			reason: "Owning its Gateway does not open another tenant's zone: inside the platform's zone only the parent's part may be delegated",
			in: Input{Name: "evil", Parent: "tenant-alice-x", Spec: appsv1alpha1.TenantSpec{Host: "shop.bob.example.org", Gateway: yes},
				ParentLabels: map[string]string{kube.LabelNamespaceHost: "x.alice.example.org", kube.LabelNamespaceGateway: "tenant-root"}, Platform: platform()},
			want: `spec.host "shop.bob.example.org" must equal or be under the parent tenant's host "x.alice.example.org" (namespace tenant-alice-x), or, for a tenant with its own Gateway, be an apex of its own outside the platform's zone "example.org": a nested tenant is delegated only part of its parent's zone`,
		},
		"NestedOwnApexWithoutGateway": {
			reason: "An apex of its own is for a tenant that owns its Gateway: without one, its routes would be judged on the parent's Gateway, outside its apex",
			in: Input{Name: "acme", Parent: "tenant-alice", Spec: appsv1alpha1.TenantSpec{Host: "customer1.example"},
				ParentLabels: map[string]string{kube.LabelNamespaceHost: "alice.example.org", kube.LabelNamespaceGateway: "tenant-root"}, Platform: platform()},
			want: `spec.host "customer1.example" must equal or be under the parent tenant's host "alice.example.org" (namespace tenant-alice): a nested tenant is delegated only part of its parent's zone; only a tenant with its own Gateway (spec.gateway) may be given an apex of its own outside the platform's zone "example.org"`,
		},
		"NestedHostThePlatformApex": {
			reason: "Nor may it claim the platform's apex",
			in: Input{Name: "evil", Parent: "tenant-alice", Spec: appsv1alpha1.TenantSpec{Host: "example.org"},
				ParentLabels: map[string]string{kube.LabelNamespaceHost: "alice.example.org", kube.LabelNamespaceGateway: "tenant-root"}, Platform: platform()},
			want: `spec.host "example.org" must equal or be under the parent tenant's host "alice.example.org" (namespace tenant-alice): a nested tenant is delegated only part of its parent's zone; only a tenant with its own Gateway (spec.gateway) may be given an apex of its own outside the platform's zone "example.org"`,
		},
		"NoApex": {
			in:   Input{Name: "bob", Parent: "tenant-alice", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, Platform: platform()},
			want: "the tenant has no apex domain: set spec.host, or give the parent tenant tenant-alice a host, before asking for a Gateway",
		},
		"ClassNotAllowed": {
			in:   Input{Name: "eve", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes, GatewayClass: "internal-only"}, ParentLabels: rootLabels, Platform: platform()},
			want: `gatewayClass "internal-only" is not allowed for tenants: allowed classes are ["cilium", "envoy", "edge-tunnel"] (gateway.className and gateway.tenantSelectableClasses)`,
		},
		"PublishingOntoEdge": {
			in:   Input{Name: "root", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes, GatewayClass: "edge-tunnel"}, Platform: platform()},
			want: `the publishing tenant tenant-root cannot use gatewayClass "edge-tunnel": it terminates TLS differently from gateway.className "cilium", and the cluster issuers' HTTP-01 solver follows gateway.className, so every HTTP-01 certificate in the cluster would stop issuing; change gateway.className instead`,
		},
		"PublishingOffEdge": {
			in: Input{Name: "root", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes, GatewayClass: "cilium"}, Platform: with(func(p *Platform) {
				p.ClassName = "edge-tunnel"
				p.TenantSelectableClasses = []string{"cilium"}
			})},
			want: `the publishing tenant tenant-root cannot use gatewayClass "cilium": it terminates TLS differently from gateway.className "edge-tunnel", and the cluster issuers' HTTP-01 solver follows gateway.className, so every HTTP-01 certificate in the cluster would stop issuing; change gateway.className instead`,
		},
		"UnsupportedSolver": {
			in:   Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(func(p *Platform) { p.Solver = "tls-alpn01" })},
			want: `publishing.certificates.solver "tls-alpn01" is not supported: use ["http01", "dns01"]`,
		},
		"UnsupportedIssuer": {
			reason: "A name neither built in nor defined lists the built-ins",
			in:     Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(func(p *Platform) { p.IssuerName = "zerossl" })},
			want:   `publishing.certificates.issuerName: Unsupported value: "zerossl": supported values: "letsencrypt-prod", "letsencrypt-stage" (the built-in issuers, then the servers publishing.certificates.acmeServers defines)`,
		},
		"UndefinedACMEServer": {
			reason: "A name the settings do not define lists the built-ins, then every defined server by name",
			in: Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(func(p *Platform) {
				p.IssuerName = "zerossl"
				p.ACMEServers = map[string]v1alpha1.ACMEServer{"zeta": corpCA(), "corp-ca": corpCA()}
			})},
			want: `publishing.certificates.issuerName: Unsupported value: "zerossl": supported values: "letsencrypt-prod", "letsencrypt-stage", "corp-ca", "zeta" (the built-in issuers, then the servers publishing.certificates.acmeServers defines)`,
		},
		"ACMEServerRedefinesBuiltin": {
			reason: "A server named like a built-in issuer is ambiguous: refused, whichever name is selected",
			in: Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(func(p *Platform) {
				p.ACMEServers = map[string]v1alpha1.ACMEServer{"letsencrypt-stage": corpCA()}
			})},
			want: `platform setting publishing.certificates.acmeServers[letsencrypt-stage] redefines the built-in issuer "letsencrypt-stage": give that server another name`,
		},
		"ACMEServerPlainHTTP": {
			reason: "The selected server's directory must be https, named by its place in the settings",
			in: Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(func(p *Platform) {
				p.IssuerName = "corp-ca"
				p.ACMEServers = map[string]v1alpha1.ACMEServer{"corp-ca": {Server: "http://acme.corp.example/directory"}}
			})},
			want: `publishing.certificates.issuerName "corp-ca" does not name a valid ACME server: publishing.certificates.acmeServers[corp-ca].server: Invalid value: "http://acme.corp.example/directory": must be an https:// URL with a host, such as https://acme.example.org/directory: the ACME account's requests and its External Account Binding go there`,
		},
		"ACMEServerBundleNotPEMAndHalfABinding": {
			reason: "Every error of the selected server is named",
			in: Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(func(p *Platform) {
				p.IssuerName = "corp-ca"
				a := corpCA()
				a.CABundle, a.ExternalAccountBinding.KeySecretRef = "corp root", nil
				p.ACMEServers = map[string]v1alpha1.ACMEServer{"corp-ca": a}
			})},
			want: `publishing.certificates.issuerName "corp-ca" does not name a valid ACME server: [publishing.certificates.acmeServers[corp-ca].caBundle: Invalid value: must be PEM text holding at least one -----BEGIN CERTIFICATE----- block (the PEM itself, not base64 of it), publishing.certificates.acmeServers[corp-ca].externalAccountBinding.keySecretRef: Required value: the Secret (name and key) holding the CA's MAC key: an External Account Binding needs both keyID and keySecretRef]`,
		},
		"ACMEServerNameNotALabel": {
			reason: "The name becomes the TenantGateway's issuerName, which the XRD holds to a DNS label",
			in: Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(func(p *Platform) {
				p.IssuerName = "Corp.CA"
				p.ACMEServers = map[string]v1alpha1.ACMEServer{"Corp.CA": corpCA()}
			})},
			want: `publishing.certificates.issuerName "Corp.CA" does not name a valid ACME server: publishing.certificates.issuerName: Invalid value: "Corp.CA": the name of an ACME server becomes the TenantGateway's spec.issuerName, a DNS label: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
		},
		"ACMEServerInvalidInDNS01": {
			reason: "dns01 judges the selected server too",
			in: Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(func(p *Platform) {
				p.Solver, p.IssuerName = "dns01", "corp-ca"
				p.ACMEServers = map[string]v1alpha1.ACMEServer{"corp-ca": {Server: "https://acme.corp.example/directory", Email: "Ops <ops@example.org>"}}
			})},
			want: `publishing.certificates.issuerName "corp-ca" does not name a valid ACME server: publishing.certificates.acmeServers[corp-ca].email: Invalid value: "Ops <ops@example.org>": must be a bare email address such as ops@example.org, without a display name or angle brackets`,
		},
		"UnsupportedProvider": {
			in: Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(func(p *Platform) {
				p.Solver, p.DNS01 = "dns01", &v1alpha1.DNS01{Provider: "gandi"}
			})},
			want: `publishing.certificates.dns01.provider "gandi" is not supported: use ["cloudflare", "route53", "digitalocean", "rfc2136"]`,
		},
		"ProviderBlockMissing": {
			reason: "route53's region has no default, so a missing block is refused naming it",
			in: Input{Name: "bob", Parent: "tenant-root", Spec: appsv1alpha1.TenantSpec{Gateway: yes}, ParentLabels: rootLabels, Platform: with(func(p *Platform) {
				p.Solver, p.DNS01 = "dns01", &v1alpha1.DNS01{Provider: "route53"}
			})},
			want: "publishing.certificates.dns01 does not make a valid TenantGateway: publishing.certificates.dns01.route53: Required value: publishing.certificates.dns01.provider is route53, so the route53 block is required",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(view{Refused: tc.want}, derive(t, tc.in)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
