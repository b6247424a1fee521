//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// tenantUser is a client that acts as a tenant's user: not in any trusted
// group, with RBAC to do everything the policies judge, so that only the
// admission policies can refuse it.
func tenantUser(t *testing.T) client.Client {
	t.Helper()
	apply(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: e2e-tenant-user
rules:
- apiGroups: [""]
  resources: [namespaces]
  verbs: [get, update, patch]
- apiGroups: [apps.cozystack.io]
  resources: [tenants]
  verbs: [get, create, update, patch]
- apiGroups: [gateway.networking.k8s.io]
  resources: [gateways, httproutes, tlsroutes]
  verbs: [get, create, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: e2e-tenant-user
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-tenant-user}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice@example.com}
`)
	cfg := rest.CopyConfig(restCfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice@example.com", Groups: []string{"tenant-users", "system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: k8s.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAdmissionLayers: each admission layer of SPEC §8 (examples/cluster/
// admission-policies.yaml, applied by TestMain) allows a good object and
// denies a bad one with the seed's message, on the real API server. Every
// request is a server-side dry run, so nothing is created.
func TestAdmissionLayers(t *testing.T) {
	t.Parallel()
	namespace(t, "tenant-adm", map[string]string{"namespace.cozystack.io/host": "adm.example.org", labelGateway: "tenant-adm"})
	user := tenantUser(t)
	admin := k8s
	gateway := func(host string) string {
		return fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: probe, namespace: tenant-adm}
spec:
  gatewayClassName: cilium
  listeners:
  - {name: https, port: 443, protocol: HTTPS, hostname: %q, tls: {certificateRefs: [{name: probe-tls}]}}
`, host)
	}
	route := func(kind, version, host string) string {
		return fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/%s
kind: %s
metadata: {name: probe, namespace: tenant-adm}
spec:
  parentRefs: [{name: cozystack}]
  hostnames: [%q]
  rules: [{backendRefs: [{name: app, port: 443}]}]
`, version, kind, host)
	}
	tenant := func(host string) string {
		spec := "{}"
		if host != "" {
			spec = fmt.Sprintf("{host: %q}", host)
		}
		return fmt.Sprintf("apiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata: {name: probe, namespace: tenant-adm}\nspec: %s\n", spec)
	}
	ns := func(host string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: tenant-adm\n  labels: {namespace.cozystack.io/host: %q, e2e: probe}\n", host)
	}
	cases := []admissionCase{
		{"L2 gateway-hostname-policy", admin, "admin", gateway("shop.adm.example.org"), ""},
		{"L2 gateway-hostname-policy", admin, "admin", gateway("shop.example.net"),
			"Gateway listener hostname must equal the namespace's namespace.cozystack.io/host label or be a subdomain of it"},
		{"L3 tenant-host-policy", user, "tenant user", tenant(""), ""},
		{"L3 tenant-host-policy", admin, "admin", tenant("shop.example.net"), ""},
		{"L3 tenant-host-policy", user, "tenant user", tenant("shop.example.net"),
			"tenant.spec.host can only be set by cluster administrators and the platform's service accounts; leave it empty to derive the host from the parent tenant"},
		{"L4 namespace-host-label-policy", user, "tenant user", ns("adm.example.org"), ""},
		{"L4 namespace-host-label-policy", admin, "admin", ns("other.example.org"), ""},
		{"L4 namespace-host-label-policy", user, "tenant user", ns("other.example.org"),
			"namespace label namespace.cozystack.io/host is immutable once set"},
		{"L5 route-hostname-policy", user, "tenant user", route("HTTPRoute", "v1", "shop.adm.example.org"), ""},
		{"L5 route-hostname-policy", user, "tenant user", route("HTTPRoute", "v1", "shop.example.net"),
			"HTTPRoute hostnames must equal the namespace's namespace.cozystack.io/host label or be subdomains of it"},
		{"L5 route-hostname-policy-tls", user, "tenant user", route("TLSRoute", "v1", "db.adm.example.org"), ""},
		{"L5 route-hostname-policy-tls", user, "tenant user", route("TLSRoute", "v1", "db.example.net"),
			"TLSRoute hostnames must equal the namespace's namespace.cozystack.io/host label or be subdomains of it"},
	}
	// The API server loads new policies asynchronously (TestMain applied them
	// moments ago on a fresh cluster): each denial is awaited, and the
	// allowed objects are tried once every layer has denied something.
	try := func(tc admissionCase) error {
		objs, err := decode(tc.doc)
		if err != nil {
			t.Fatal(err)
		}
		return tc.as.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(objs[0]), client.FieldOwner(fieldOwner), client.ForceOwnership, client.DryRunAll)
	}
	for _, tc := range cases {
		if tc.message == "" {
			continue
		}
		eventually(t, 30*time.Second, "denied: "+tc.String(), func() (bool, string) {
			err := try(tc)
			return err != nil && strings.Contains(err.Error(), tc.message), fmt.Sprintf("want %q, got %v", tc.message, err)
		})
	}
	for _, tc := range cases {
		if tc.message != "" {
			continue
		}
		if err := try(tc); err != nil {
			t.Errorf("%s: want allowed, got %v", tc, err)
		} else {
			t.Logf("allowed: %s", tc)
		}
	}
}

type admissionCase struct {
	layer   string
	as      client.Client
	who     string
	doc     string
	message string // empty: allowed
}

// String names the layer, the caller and the object, for the test log.
func (tc admissionCase) String() string {
	return fmt.Sprintf("%s: as %s: %s", tc.layer, tc.who, strings.Join(strings.Fields(tc.doc), " "))
}
