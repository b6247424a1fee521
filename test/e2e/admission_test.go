//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Service accounts of crossplane-system as their tokens authenticate:
// Crossplane's, which the policies trust by name, and another function's,
// which shares Crossplane's group but not its trust.
const (
	crossplaneSA  = "system:serviceaccount:crossplane-system:crossplane"
	otherFunction = "system:serviceaccount:crossplane-system:function-foo"
)

var crossplaneSystemGroups = []string{"system:serviceaccounts", "system:serviceaccounts:crossplane-system", "system:authenticated"}

// subjectRBAC gives the tenant's user, the other function's service
// account and cert-manager's RBAC to do everything the policies judge, so that only the
// admission policies can refuse them. Crossplane's account keeps the RBAC
// it runs with.
func subjectRBAC(t *testing.T) {
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
  resources: [gateways, httproutes, tlsroutes, grpcroutes]
  verbs: [get, create, update, patch]
- apiGroups: [kubernetes.m.crossplane.io, kubernetes.crossplane.io]
  resources: [objects]
  verbs: [get, create, update, patch]
- apiGroups: [kubernetes.m.crossplane.io]
  resources: [providerconfigs]
  verbs: [get, create, update, patch]
- apiGroups: [gateway.cozystack.io]
  resources: [tenantgateways]
  verbs: [get, create, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: e2e-tenant-user
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-tenant-user}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice@example.com}
- {kind: ServiceAccount, namespace: crossplane-system, name: function-foo}
- {kind: ServiceAccount, namespace: cozy-cert-manager, name: cert-manager}
`)
}

// TestAdmissionLayers: each admission policy of examples/cluster/
// admission-policies.yaml (applied by TestMain) allows a good object and
// denies a bad one with its message, on the real API server, and trusts
// Crossplane's service account but not another one of crossplane-system.
// Every request is a server-side dry run, so nothing is created.
func TestAdmissionLayers(t *testing.T) {
	t.Parallel()
	namespace(t, "tenant-adm", map[string]string{"namespace.cozystack.io/host": "adm.example.org", labelGateway: "tenant-adm"})
	subjectRBAC(t)
	user := as(t, "alice@example.com", "tenant-users", "system:authenticated")
	crossplane := as(t, crossplaneSA, crossplaneSystemGroups...)
	function := as(t, otherFunction, crossplaneSystemGroups...)
	// An administrator as kubeadm makes one: in kubeadm:cluster-admins,
	// bound to cluster-admin, and not in system:masters. Every admin row
	// passing shows the trusted-callers setting
	// (examples/cluster/trusted-callers.yaml) trusts that group on the real
	// API server, whoever the harness itself acts as.
	admin := as(t, "kubernetes-admin", "kubeadm:cluster-admins", "system:authenticated")
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
	// route is a route of the kind with the hostnames, none at all when
	// hosts is empty.
	route := func(kind, version string, hosts ...string) string {
		hostnames := ""
		if len(hosts) > 0 {
			hostnames = fmt.Sprintf("  hostnames: [%s]\n", strings.Join(hosts, ", "))
		}
		return fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/%s
kind: %s
metadata: {name: probe, namespace: tenant-adm}
spec:
  parentRefs: [{name: cozystack, port: 443}]
%s  rules: [{backendRefs: [{name: app, port: 443}]}]
`, version, kind, hostnames)
	}
	// onHTTP is an HTTPRoute of tenant-adm's own Gateway with the parentRef
	// fields (the port-80 rule, The owner on port 80 in docs/design.md).
	onHTTP := func(kind, ref string) string {
		return fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: %s
metadata: {name: probe, namespace: tenant-adm}
spec:
  parentRefs: [{name: cozystack%s}]
  hostnames: [shop.adm.example.org]
  rules: [{backendRefs: [{name: app, port: 443}]}]
`, kind, ref)
	}
	// object is a provider-kubernetes Object naming the provider config;
	// namespaced (kubernetes.m.crossplane.io) when kind is set.
	object := func(kind, config string) string {
		if kind == "" {
			return fmt.Sprintf(`
apiVersion: kubernetes.crossplane.io/v1alpha2
kind: Object
metadata: {name: tenant-adm-probe}
spec:
  providerConfigRef: {name: %s}
  forProvider: {manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: probe, namespace: tenant-adm}}}
`, config)
		}
		return fmt.Sprintf(`
apiVersion: kubernetes.m.crossplane.io/v1alpha1
kind: Object
metadata: {name: probe, namespace: tenant-adm}
spec:
  providerConfigRef: {kind: %s, name: %s}
  forProvider: {manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: probe, namespace: tenant-adm}}}
`, kind, config)
	}
	// copier is a namespaced Object of the tenant's own ProviderConfig that
	// copies the data of the Secret ns/wildcard-tls into one of its own.
	copier := func(ns string) string {
		return fmt.Sprintf(`
apiVersion: kubernetes.m.crossplane.io/v1alpha1
kind: Object
metadata: {name: probe, namespace: tenant-adm}
spec:
  providerConfigRef: {kind: ProviderConfig, name: mine}
  references:
  - patchesFrom: {apiVersion: v1, kind: Secret, namespace: %s, name: wildcard-tls, fieldPath: data}
    toFieldPath: data
  forProvider: {manifest: {apiVersion: v1, kind: Secret, metadata: {name: wildcard-tls, namespace: tenant-adm}}}
`, ns)
	}
	providerConfig := func(credentials string) string {
		return "apiVersion: kubernetes.m.crossplane.io/v1alpha1\nkind: ProviderConfig\nmetadata: {name: mine, namespace: tenant-adm}\nspec: {credentials: " + credentials + "}\n"
	}
	tenant := func(host string) string {
		spec := "{}"
		if host != "" {
			spec = fmt.Sprintf("{host: %q}", host)
		}
		return fmt.Sprintf("apiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata: {name: probe, namespace: tenant-adm}\nspec: %s\n", spec)
	}
	tgw := "apiVersion: gateway.cozystack.io/v1alpha1\nkind: TenantGateway\nmetadata: {name: probe, namespace: tenant-adm}\nspec: {apex: adm.example.org}\n"
	ns := func(host string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: tenant-adm\n  labels: {namespace.cozystack.io/host: %q, e2e: probe}\n", host)
	}
	const (
		l2 = "Gateway listener hostname must equal the namespace's namespace.cozystack.io/host label or be a subdomain of it"
		l3 = "tenant.spec.host can only be set by cluster administrators and the platform's service accounts; leave it empty to derive the host from the parent tenant"
		l4 = "namespace label namespace.cozystack.io/host is immutable once set"
		tw = "TenantGateways in tenant namespaces are written by the platform (from the Tenant's spec.gateway), Crossplane and cluster administrators only; change your Tenant instead"
		rf = "provider-kubernetes Objects may reference (spec.references dependsOn, patchesFrom) only objects in their own namespace, set explicitly, unless Crossplane, provider-kubernetes, cluster administrators or the platform's service accounts create or change them, since the provider reads references with its own service account"
		cr = "provider-kubernetes ProviderConfigs are created and changed only by Crossplane, provider-kubernetes, cluster administrators and the platform's service accounts, since the provider runs their credentials (InjectedIdentity, a kubeconfig's tokenFile or exec) in its own pod, as its own service account"
		pc = "provider-kubernetes Objects may use the provider config function-tenant-gateway only when Crossplane, provider-kubernetes, cluster administrators or the platform's service accounts create or change them; reference a ProviderConfig of your own instead"
	)
	outside := func(kind string) string {
		return kind + " hostnames must equal the namespace's namespace.cozystack.io/host label or be subdomains of it"
	}
	hostless := func(kind string) string {
		return kind + " without spec.hostnames is allowed only to cluster administrators and the platform's service accounts, since it would attach to every listener that admits its namespace; list its hostnames, equal to or under the namespace's namespace.cozystack.io/host label"
	}
	port80 := func(kind string) string {
		return kind + " parentRefs to a Gateway in the route's own namespace must name a listener other than http (sectionName) or a port other than 80 (port: 443): that Gateway's port-80 listener http admits this namespace for its redirect to https and cert-manager's HTTP-01 challenges, and would serve the route in plain HTTP; only cluster administrators and the platform's service accounts may attach routes to it"
	}
	certManager := as(t, "system:serviceaccount:cozy-cert-manager:cert-manager", "system:serviceaccounts", "system:serviceaccounts:cozy-cert-manager", "system:authenticated")
	const other = "another function of crossplane-system"
	cases := []admissionCase{
		{"L2 gateway-hostname-policy", admin, "admin", gateway("shop.adm.example.org"), ""},
		{"L2 gateway-hostname-policy", admin, "admin", gateway("shop.example.net"), l2},
		{"L3 tenant-host-policy", user, "tenant user", tenant(""), ""},
		{"L3 tenant-host-policy", admin, "admin", tenant("shop.example.net"), ""},
		{"L3 tenant-host-policy", user, "tenant user", tenant("shop.example.net"), l3},
		{"L3 tenant-host-policy", function, other, tenant("shop.example.net"), l3},
		{"L4 namespace-host-label-policy", user, "tenant user", ns("adm.example.org"), ""},
		{"L4 namespace-host-label-policy", admin, "admin", ns("other.example.org"), ""},
		{"L4 namespace-host-label-policy", user, "tenant user", ns("other.example.org"), l4},
		{"L4 namespace-host-label-policy", function, other, ns("other.example.org"), l4},
		{"L5 route-hostname-policy", user, "tenant user", route("HTTPRoute", "v1", "shop.adm.example.org"), ""},
		{"L5 route-hostname-policy", user, "tenant user", route("HTTPRoute", "v1", "shop.example.net"), outside("HTTPRoute")},
		{"L5 route-hostname-policy", user, "tenant user", route("HTTPRoute", "v1"), hostless("HTTPRoute")},
		{"L5 route-hostname-policy", function, other, route("HTTPRoute", "v1"), hostless("HTTPRoute")},
		{"L5 route-hostname-policy", crossplane, "Crossplane", route("HTTPRoute", "v1"), ""},
		{"L5 route-hostname-policy port 80", user, "tenant user", onHTTP("HTTPRoute", ""), port80("HTTPRoute")},
		{"L5 route-hostname-policy port 80", user, "tenant user", onHTTP("HTTPRoute", ", sectionName: http"), port80("HTTPRoute")},
		{"L5 route-hostname-policy port 80", user, "tenant user", onHTTP("HTTPRoute", ", port: 80"), port80("HTTPRoute")},
		{"L5 route-hostname-policy port 80", user, "tenant user", onHTTP("HTTPRoute", ", sectionName: https"), ""},
		{"L5 route-hostname-policy port 80", user, "tenant user", onHTTP("HTTPRoute", ", namespace: tenant-root"), ""},
		{"L5 route-hostname-policy port 80", certManager, "cert-manager", onHTTP("HTTPRoute", ", sectionName: http"), ""},
		{"L5 route-hostname-policy port 80", function, other, onHTTP("HTTPRoute", ", sectionName: http"), port80("HTTPRoute")},
		{"L5 route-hostname-policy-grpc port 80", user, "tenant user", onHTTP("GRPCRoute", ""), port80("GRPCRoute")},
		{"L5 route-hostname-policy-tls", user, "tenant user", route("TLSRoute", "v1", "db.adm.example.org"), ""},
		{"L5 route-hostname-policy-tls", user, "tenant user", route("TLSRoute", "v1", "db.example.net"), outside("TLSRoute")},
		// No TLSRoute without hostnames: v1's schema requires them, and this
		// server serves no older version (test/policies covers the rule).
		{"L5 route-hostname-policy-grpc", user, "tenant user", route("GRPCRoute", "v1", "grpc.adm.example.org"), ""},
		{"L5 route-hostname-policy-grpc", user, "tenant user", route("GRPCRoute", "v1", "grpc.example.net"), outside("GRPCRoute")},
		{"L5 route-hostname-policy-grpc", user, "tenant user", route("GRPCRoute", "v1"), hostless("GRPCRoute")},
		{"L5 route-hostname-policy-grpc", admin, "admin", route("GRPCRoute", "v1"), ""},
		{"object-provider-config-policy", user, "tenant user", object("ClusterProviderConfig", "function-tenant-gateway"), pc},
		{"object-provider-config-policy", function, other, object("ClusterProviderConfig", "function-tenant-gateway"), pc},
		{"object-provider-config-policy", user, "tenant user", object("", "function-tenant-gateway"), pc},
		{"object-provider-config-policy", crossplane, "Crossplane", object("ClusterProviderConfig", "function-tenant-gateway"), ""},
		{"object-provider-config-policy", user, "tenant user", object("ProviderConfig", "function-tenant-gateway"), ""},
		{"object-provider-config-policy", user, "tenant user", copier("tenant-root"), rf},
		{"object-provider-config-policy", user, "tenant user", copier("tenant-adm"), ""},
		{"object-provider-config-policy", admin, "admin", copier("tenant-root"), ""},
		{"provider-config-writer-policy", user, "tenant user", providerConfig("{source: InjectedIdentity}"), cr},
		{"provider-config-writer-policy", user, "tenant user", providerConfig("{source: Secret, secretRef: {namespace: tenant-adm, name: kubeconfig, key: kubeconfig}}"), cr},
		{"provider-config-writer-policy", function, other, providerConfig("{source: InjectedIdentity}"), cr},
		{"provider-config-writer-policy", admin, "admin", providerConfig("{source: InjectedIdentity}"), ""},
		{"tenantgateway-writer-policy", user, "tenant user", tgw, tw},
		{"tenantgateway-writer-policy", function, other, tgw, tw},
		{"tenantgateway-writer-policy", crossplane, "Crossplane", tgw, ""},
		{"tenantgateway-writer-policy", admin, "admin", tgw, ""},
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

// TestTenantGatewayStatusWriters: the status of a TenantGateway is the
// function's memory (served listeners, digests) and what its tenant is told;
// a tenant whose role grants tenantgateways/status (Crossplane's aggregated
// edit roles do) still cannot write it, Crossplane can. The TenantGateway is
// paused, so nothing reconciles it; the writes are server-side dry runs.
func TestTenantGatewayStatusWriters(t *testing.T) {
	t.Parallel()
	namespace(t, "tenant-adm-status", map[string]string{"namespace.cozystack.io/host": "status.example.org", labelGateway: "tenant-adm-status"})
	// Its own role, the one Crossplane's aggregated edit role grants (TestAdmissionLayers
	// deletes subjectRBAC's when it ends).
	apply(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: e2e-tenantgateway-status-writer}
rules:
- apiGroups: [gateway.cozystack.io]
  resources: [tenantgateways, tenantgateways/status]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: e2e-tenantgateway-status-writer, namespace: tenant-adm-status}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-tenantgateway-status-writer}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice@example.com}
`)
	apply(t, "apiVersion: gateway.cozystack.io/v1alpha1\nkind: TenantGateway\nmetadata: {name: probe, namespace: tenant-adm-status, annotations: {crossplane.io/paused: \"true\"}}\nspec: {apex: status.example.org}\n")
	const tw = "TenantGateways in tenant namespaces are written by the platform (from the Tenant's spec.gateway), Crossplane and cluster administrators only; change your Tenant instead"
	write := func(c client.Client) error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvkTenantGateway)
		u.SetNamespace("tenant-adm-status")
		u.SetName("probe")
		patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"conflictCount":7}}`))
		return c.Status().Patch(t.Context(), u, patch, client.DryRunAll)
	}
	eventually(t, 30*time.Second, "a tenant's status write is denied", func() (bool, string) {
		err := write(as(t, "alice@example.com", "tenant-users", "system:authenticated"))
		return err != nil && strings.Contains(err.Error(), tw), fmt.Sprintf("want %q, got %v", tw, err)
	})
	if err := write(as(t, crossplaneSA, crossplaneSystemGroups...)); err != nil {
		t.Errorf("Crossplane's status write: want allowed, got %v", err)
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
