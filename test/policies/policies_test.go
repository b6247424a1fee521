// Package policies checks the admission policies shipped in
// examples/cluster/admission-policies.yaml offline: every expression
// compiles as CEL, and each layer allows a good object and denies a bad one
// with the message the policy gives. The end-to-end tests apply them to a real API
// server.
package policies

import (
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func load(t *testing.T) map[string]*admissionv1.ValidatingAdmissionPolicy {
	t.Helper()
	p, _ := loadWithBindings(t)
	return p
}

// loadWithBindings decodes the shipped policies and their bindings, by
// policy name, and checks what every one must have: fail closed, deny, and
// the trusted callers read from the one setting.
func loadWithBindings(t *testing.T) (map[string]*admissionv1.ValidatingAdmissionPolicy, map[string]*admissionv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	set, err := Load(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	policies, bindings := set.Policies, set.Bindings
	for name, p := range policies {
		if p.Spec.FailurePolicy == nil || *p.Spec.FailurePolicy != admissionv1.Fail {
			t.Errorf("policy %s must fail closed (failurePolicy: Fail)", name)
		}
		bd, ok := bindings[name]
		if !ok {
			t.Errorf("policy %s has no binding", name)
			continue
		}
		if diff := cmp.Diff([]admissionv1.ValidationAction{admissionv1.Deny}, bd.Spec.ValidationActions); diff != "" {
			t.Errorf("binding of %s: validationActions -want, +got:\n%s", name, diff)
		}
		checkParams(t, p, bd)
	}
	return policies, bindings
}

// checkParams: a policy that trusts anyone reads who from the setting
// (paramKind EnvironmentConfig, its binding's paramRef naming the setting)
// and denies when the setting does not exist; a policy that trusts nobody
// reads no parameter.
func checkParams(t *testing.T, p *admissionv1.ValidatingAdmissionPolicy, bd *admissionv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	trusts := slices.ContainsFunc(p.Spec.Variables, func(v admissionv1.Variable) bool { return v.Name == "trusted" })
	if !trusts {
		if p.Spec.ParamKind != nil || bd.Spec.ParamRef != nil {
			t.Errorf("policy %s trusts nobody but reads a parameter", p.Name)
		}
		return
	}
	deny := admissionv1.DenyAction
	want := struct {
		Kind *admissionv1.ParamKind
		Ref  *admissionv1.ParamRef
	}{
		&admissionv1.ParamKind{APIVersion: "apiextensions.crossplane.io/v1beta1", Kind: "EnvironmentConfig"},
		&admissionv1.ParamRef{Name: settingName, ParameterNotFoundAction: &deny},
	}
	got := want
	got.Kind, got.Ref = p.Spec.ParamKind, bd.Spec.ParamRef
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("policy %s does not read the trusted callers from %s (-want +got):\n%s", p.Name, settingName, diff)
	}
}

// settingName is the EnvironmentConfig of trusted callers.
const settingName = SettingName

// setting is examples/cluster/trusted-callers.yaml as the policies see it
// (params), or with data replaced.
func setting(t *testing.T, data map[string]any) map[string]any {
	t.Helper()
	ec, err := Setting(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if data != nil {
		ec["data"] = data
	}
	return ec
}

func eval(t *testing.T, expr string, vars map[string]any) any {
	t.Helper()
	v, err := Eval(expr, vars)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// noParams is what the API server answers when a binding's parameter does
// not exist and its parameterNotFoundAction is Deny.
const noParams = NoParams

// admit is Admit, failing the test on an expression that does not
// evaluate.
func admit(t *testing.T, p *admissionv1.ValidatingAdmissionPolicy, in map[string]any) string {
	t.Helper()
	msg, err := Admit(p, in)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func TestExpressionsCompile(t *testing.T) {
	policies := load(t)
	want := []string{"deletion-guard-policy", "gateway-hostname-policy", "namespace-host-label-policy", "object-provider-config-policy", "provider-config-writer-policy", "route-hostname-policy", "route-hostname-policy-grpc", "route-hostname-policy-tls", "tenant-host-policy", "tenantgateway-writer-policy", "trusted-callers-setting-policy"}
	var got []string
	for name, p := range policies {
		got = append(got, name)
		var exprs []string
		for _, m := range p.Spec.MatchConditions {
			exprs = append(exprs, m.Expression)
		}
		for _, v := range p.Spec.Variables {
			exprs = append(exprs, v.Expression)
		}
		for _, v := range p.Spec.Validations {
			exprs = append(exprs, v.Expression)
		}
		for _, e := range exprs {
			if _, iss := env.Compile(e); iss.Err() != nil {
				t.Errorf("%s: %q does not compile: %v", name, e, iss.Err())
			}
		}
	}
	if diff := cmp.Diff(want, sorted(got)); diff != "" {
		t.Errorf("policies: -want, +got:\n%s", diff)
	}
}

func ns(name string, labels map[string]any) map[string]any {
	return map[string]any{"metadata": map[string]any{"name": name, "labels": labels}}
}

// req is an admission request of user, in the groups the authenticator
// gives it.
func req(op, namespace, user string, groups ...string) map[string]any {
	g := make([]any, 0, len(groups))
	for _, x := range groups {
		g = append(g, x)
	}
	return map[string]any{"operation": op, "namespace": namespace, "userInfo": map[string]any{"username": user, "groups": g}}
}

// sa is the username and groups of a service account, as a token of it
// authenticates.
func sa(namespace, name string) (string, []string) {
	return "system:serviceaccount:" + namespace + ":" + name, []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
}

// TestOneTrustedSet: every policy that exempts trusted callers spells the
// same set, so that no policy trusts a caller another one refuses.
func TestOneTrustedSet(t *testing.T) {
	exprs := map[string][]string{}
	for name, p := range load(t) {
		for _, v := range p.Spec.Variables {
			if v.Name == "trusted" {
				exprs[v.Expression] = append(exprs[v.Expression], name)
			}
		}
	}
	if len(exprs) != 1 {
		t.Errorf("policies disagree on who is trusted: %v", exprs)
	}
}

func TestPolicies(t *testing.T) {
	p := load(t)
	alice := ns("tenant-alice", map[string]any{"namespace.cozystack.io/host": "alice.example.org"})
	bare := ns("tenant-bare", map[string]any{})
	// A tenant's user, Crossplane, provider-kubernetes, and another
	// function of crossplane-system, which shares Crossplane's group but
	// none of its trust.
	user := req("CREATE", "tenant-alice", "alice@example.com", "system:authenticated", "tenant-alice-admins")
	as := func(op, namespace, name string) map[string]any {
		u, g := sa("crossplane-system", name)
		return req(op, namespace, u, g...)
	}
	crossplane := as("CREATE", "tenant-alice", "crossplane")
	function := as("CREATE", "tenant-alice", "function-foo")
	// A cluster administrator outside system:masters: the user of kubeadm's
	// admin.conf (kubeadm 1.29 and later), whose group is bound to
	// cluster-admin; and one of a group the setting does not list.
	kubeadmAdmin := func(op, namespace string) map[string]any {
		return req(op, namespace, "kubernetes-admin", "kubeadm:cluster-admins", "system:authenticated")
	}
	oidcAdmin := req("CREATE", "tenant-alice", "oidc:ops@example.com", "oidc:platform-admins", "system:authenticated")
	gw := func(hosts ...string) map[string]any {
		ls := []any{map[string]any{"name": "http", "port": 80}}
		for _, h := range hosts {
			ls = append(ls, map[string]any{"name": "l", "hostname": h})
		}
		return map[string]any{"spec": map[string]any{"listeners": ls}}
	}
	route := func(hosts ...string) map[string]any {
		hs := make([]any, 0, len(hosts))
		for _, h := range hosts {
			hs = append(hs, h)
		}
		return map[string]any{"spec": map[string]any{"hostnames": hs}}
	}
	hostless := map[string]any{"spec": map[string]any{"rules": []any{}}}
	tgw := map[string]any{"spec": map[string]any{"apex": "example.net", "attachedNamespaces": []any{"tenant-bob"}}}
	tenant := func(host string) map[string]any {
		spec := map[string]any{}
		if host != "" {
			spec["host"] = host
		}
		return map[string]any{"spec": spec}
	}
	nsWith := func(host string) map[string]any {
		labels := map[string]any{}
		if host != "" {
			labels["namespace.cozystack.io/host"] = host
		}
		return ns("tenant-x", labels)
	}
	// object is a provider-kubernetes Object with a providerConfigRef of
	// kind (empty: none, as cluster-scoped Objects have) and name.
	object := func(kind, name string) map[string]any {
		ref := map[string]any{"name": name}
		if kind != "" {
			ref["kind"] = kind
		}
		return map[string]any{"spec": map[string]any{"forProvider": map[string]any{"manifest": map[string]any{}}, "providerConfigRef": ref}}
	}
	// withRefs is a namespaced Object of the tenant's own ProviderConfig
	// with references to (namespace, name); namespace "-" leaves it unset.
	withRefs := func(field string, refs ...[2]string) map[string]any {
		o := object("ProviderConfig", "mine")
		rs := make([]any, 0, len(refs))
		for _, r := range refs {
			target := map[string]any{"apiVersion": "v1", "kind": "Secret", "name": r[1]}
			if r[0] != "-" {
				target["namespace"] = r[0]
			}
			rs = append(rs, map[string]any{field: target})
		}
		o["spec"].(map[string]any)["references"] = rs
		return o
	}
	// providerConfig is a namespaced provider-kubernetes ProviderConfig
	// with credentials from source, a Secret of its own namespace for
	// source Secret (which may hold a kubeconfig with tokenFile or exec).
	providerConfig := func(source string) map[string]any {
		c := map[string]any{"source": source}
		if source == "Secret" {
			c["secretRef"] = map[string]any{"namespace": "tenant-alice", "name": "kubeconfig", "key": "kubeconfig"}
		}
		return map[string]any{"spec": map[string]any{"credentials": c}}
	}
	const (
		l2   = "Gateway listener hostname must equal the namespace's namespace.cozystack.io/host label or be a subdomain of it"
		l3   = "tenant.spec.host can only be set by cluster administrators and the platform's service accounts; leave it empty to derive the host from the parent tenant"
		l4   = "namespace label namespace.cozystack.io/host is immutable once set"
		l5   = "HTTPRoute hostnames must equal the namespace's namespace.cozystack.io/host label or be subdomains of it"
		l5t  = "TLSRoute hostnames must equal the namespace's namespace.cozystack.io/host label or be subdomains of it"
		l5g  = "GRPCRoute hostnames must equal the namespace's namespace.cozystack.io/host label or be subdomains of it"
		l5n  = "HTTPRoute without spec.hostnames is allowed only to cluster administrators and the platform's service accounts, since it would attach to every listener that admits its namespace; list its hostnames, equal to or under the namespace's namespace.cozystack.io/host label"
		l5tn = "TLSRoute without spec.hostnames is allowed only to cluster administrators and the platform's service accounts, since it would attach to every listener that admits its namespace; list its hostnames, equal to or under the namespace's namespace.cozystack.io/host label"
		l5gn = "GRPCRoute without spec.hostnames is allowed only to cluster administrators and the platform's service accounts, since it would attach to every listener that admits its namespace; list its hostnames, equal to or under the namespace's namespace.cozystack.io/host label"
		pc   = "provider-kubernetes Objects may use the provider config function-tenant-gateway only when Crossplane, provider-kubernetes, cluster administrators or the platform's service accounts create or change them; reference a ProviderConfig of your own instead"
		ref  = "provider-kubernetes Objects may reference (spec.references dependsOn, patchesFrom) only objects in their own namespace, set explicitly, unless Crossplane, provider-kubernetes, cluster administrators or the platform's service accounts create or change them, since the provider reads references with its own service account"
		pcw  = "provider-kubernetes ProviderConfigs are created and changed only by Crossplane, provider-kubernetes, cluster administrators and the platform's service accounts, since the provider runs their credentials (InjectedIdentity, a kubeconfig's tokenFile or exec) in its own pod, as its own service account"
		tw   = "TenantGateways in tenant namespaces are written by the platform (from the Tenant's spec.gateway), Crossplane and cluster administrators only; change your Tenant instead"
		su   = "EnvironmentConfig tenant-gateway-trusted-callers: data.users must be a list of user names (strings, such as system:serviceaccount:crossplane-system:crossplane)"
		sg   = "EnvironmentConfig tenant-gateway-trusted-callers: data.groups must be a list of group names (strings, such as kubeadm:cluster-admins)"
		none = ""
	)
	cases := map[string]struct {
		policy string
		in     map[string]any
		want   string
	}{
		"L2GatewayUnderHost":     {"gateway-hostname-policy", map[string]any{"object": gw("*.alice.example.org", "alice.example.org", "harbor.alice.example.org"), "namespaceObject": alice, "request": user}, none},
		"L2GatewayOutsideHost":   {"gateway-hostname-policy", map[string]any{"object": gw("dashboard.example.org"), "namespaceObject": alice, "request": user}, l2},
		"L2SuffixIsNotSubdomain": {"gateway-hostname-policy", map[string]any{"object": gw("evilalice.example.org"), "namespaceObject": alice, "request": user}, l2},
		"L2OtherNamespaces":      {"gateway-hostname-policy", map[string]any{"object": gw("anything.example.com"), "namespaceObject": ns("kube-system", nil), "request": req("CREATE", "kube-system", "kube-admin", "system:masters")}, "not matched"},

		"L3EmptyHost":            {"tenant-host-policy", map[string]any{"object": tenant(""), "request": user}, none},
		"L3UntrustedSetsHost":    {"tenant-host-policy", map[string]any{"object": tenant("dashboard.example.org"), "request": user}, l3},
		"L3AdminSetsHost":        {"tenant-host-policy", map[string]any{"object": tenant("customer1.example"), "request": req("CREATE", "tenant-root", "kube-admin", "system:masters")}, none},
		"L3CrossplaneSetsHost":   {"tenant-host-policy", map[string]any{"object": tenant("customer1.example"), "request": as("CREATE", "tenant-root", "crossplane")}, none},
		"L3OtherFunctionSetHost": {"tenant-host-policy", map[string]any{"object": tenant("customer1.example"), "request": as("CREATE", "tenant-root", "function-foo")}, l3},
		"L3UntrustedKeepsHost":   {"tenant-host-policy", map[string]any{"object": tenant("customer1.example"), "oldObject": tenant("customer1.example"), "request": req("UPDATE", "tenant-root", "alice@example.com", "system:authenticated")}, none},
		"L3UntrustedChangesHost": {"tenant-host-policy", map[string]any{"object": tenant("evil.example"), "oldObject": tenant("customer1.example"), "request": req("UPDATE", "tenant-root", "alice@example.com", "system:authenticated")}, l3},

		"L4UntrustedSetsLabel":          {"namespace-host-label-policy", map[string]any{"object": nsWith("dashboard.example.org"), "request": req("CREATE", "", "alice@example.com", "system:authenticated")}, l4},
		"L4SameValueReapplied":          {"namespace-host-label-policy", map[string]any{"object": nsWith("x.example.org"), "oldObject": nsWith("x.example.org"), "request": req("UPDATE", "", "alice@example.com", "system:authenticated")}, none},
		"L4UntrustedRemovesLabel":       {"namespace-host-label-policy", map[string]any{"object": nsWith(""), "oldObject": nsWith("x.example.org"), "request": req("UPDATE", "", "alice@example.com", "system:authenticated")}, l4},
		"L4CrossplaneSetsLabel":         {"namespace-host-label-policy", map[string]any{"object": nsWith("x.example.org"), "request": as("CREATE", "", "crossplane")}, none},
		"L4ProviderKubernetesPatches":   {"namespace-host-label-policy", map[string]any{"object": nsWith("x.example.org"), "oldObject": nsWith(""), "request": as("UPDATE", "", "tenant-gateway-provider-kubernetes")}, none},
		"L4OtherFunctionSetsLabel":      {"namespace-host-label-policy", map[string]any{"object": nsWith("dashboard.example.org"), "oldObject": nsWith("x.example.org"), "request": as("UPDATE", "", "function-foo")}, l4},
		"L4PlatformServiceAccountLabel": {"namespace-host-label-policy", map[string]any{"object": nsWith("x.example.org"), "request": req("CREATE", "", "system:serviceaccount:cozy-system:cozystack", "system:serviceaccounts", "system:serviceaccounts:cozy-system")}, none},

		"L5RouteUnderHost":           {"route-hostname-policy", map[string]any{"object": route("harbor.alice.example.org", "*.alice.example.org"), "namespaceObject": alice, "request": user}, none},
		"L5RouteOutsideHost":         {"route-hostname-policy", map[string]any{"object": route("harbor.alice.example.org", "dashboard.example.org"), "namespaceObject": alice, "request": user}, l5},
		"L5FailsClosed":              {"route-hostname-policy", map[string]any{"object": route("x.example.org"), "namespaceObject": bare, "request": req("CREATE", "tenant-bare", "alice@example.com", "system:authenticated")}, l5},
		"L5PlatformNamespace":        {"route-hostname-policy", map[string]any{"object": route("dashboard.example.org"), "namespaceObject": ns("cozy-dashboard", nil), "request": req("CREATE", "cozy-dashboard", "alice@example.com")}, "not matched"},
		"L5HostlessFromUser":         {"route-hostname-policy", map[string]any{"object": hostless, "namespaceObject": alice, "request": user}, l5n},
		"L5EmptyHostnamesFromUser":   {"route-hostname-policy", map[string]any{"object": route(), "namespaceObject": alice, "request": user}, l5n},
		"L5HostlessFromCrossplane":   {"route-hostname-policy", map[string]any{"object": hostless, "namespaceObject": alice, "request": crossplane}, none},
		"L5HostlessCrossplaneBareNs": {"route-hostname-policy", map[string]any{"object": hostless, "namespaceObject": bare, "request": as("CREATE", "tenant-bare", "crossplane")}, none},
		"L5HostlessFromFunction":     {"route-hostname-policy", map[string]any{"object": hostless, "namespaceObject": alice, "request": function}, l5n},
		"L5HostlessFromAdmin":        {"route-hostname-policy", map[string]any{"object": hostless, "namespaceObject": alice, "request": req("CREATE", "tenant-alice", "kube-admin", "system:masters")}, none},
		"L5TLSRouteUnderHost":        {"route-hostname-policy-tls", map[string]any{"object": route("db.alice.example.org"), "namespaceObject": alice, "request": user}, none},
		"L5TLSRouteOutsideHost":      {"route-hostname-policy-tls", map[string]any{"object": route("api.example.org"), "namespaceObject": alice, "request": user}, l5t},
		"L5TLSHostlessFromUser":      {"route-hostname-policy-tls", map[string]any{"object": hostless, "namespaceObject": alice, "request": user}, l5tn},
		"L5TLSHostlessCrossplane":    {"route-hostname-policy-tls", map[string]any{"object": hostless, "namespaceObject": alice, "request": crossplane}, none},
		"L5GRPCRouteUnderHost":       {"route-hostname-policy-grpc", map[string]any{"object": route("grpc.alice.example.org", "alice.example.org"), "namespaceObject": alice, "request": user}, none},
		"L5GRPCRouteForeignHost":     {"route-hostname-policy-grpc", map[string]any{"object": route("grpc.alice.example.org", "grpc.bob.example.org"), "namespaceObject": alice, "request": user}, l5g},
		"L5GRPCSuffixNotSubdomain":   {"route-hostname-policy-grpc", map[string]any{"object": route("evilalice.example.org"), "namespaceObject": alice, "request": user}, l5g},
		"L5GRPCFailsClosed":          {"route-hostname-policy-grpc", map[string]any{"object": route("x.example.org"), "namespaceObject": bare, "request": req("CREATE", "tenant-bare", "alice@example.com", "system:authenticated")}, l5g},
		"L5GRPCHostlessFromUser":     {"route-hostname-policy-grpc", map[string]any{"object": hostless, "namespaceObject": alice, "request": user}, l5gn},
		"L5GRPCHostlessCrossplane":   {"route-hostname-policy-grpc", map[string]any{"object": hostless, "namespaceObject": alice, "request": crossplane}, none},
		"L5GRPCPlatformNamespace":    {"route-hostname-policy-grpc", map[string]any{"object": hostless, "namespaceObject": ns("cozy-dashboard", nil), "request": req("CREATE", "cozy-dashboard", "alice@example.com")}, "not matched"},

		"ObjectOurConfigFromUser":          {"object-provider-config-policy", map[string]any{"object": object("ClusterProviderConfig", "function-tenant-gateway"), "request": user}, pc},
		"ObjectOurConfigFromFunction":      {"object-provider-config-policy", map[string]any{"object": object("ClusterProviderConfig", "function-tenant-gateway"), "request": function}, pc},
		"ObjectOurConfigFromCrossplane":    {"object-provider-config-policy", map[string]any{"object": object("ClusterProviderConfig", "function-tenant-gateway"), "request": crossplane}, none},
		"ObjectOurConfigUpdatedByProvider": {"object-provider-config-policy", map[string]any{"object": object("ClusterProviderConfig", "function-tenant-gateway"), "oldObject": object("ClusterProviderConfig", "function-tenant-gateway"), "request": as("UPDATE", "tenant-alice", "tenant-gateway-provider-kubernetes")}, none},
		"ObjectOurConfigFromAdmin":         {"object-provider-config-policy", map[string]any{"object": object("ClusterProviderConfig", "function-tenant-gateway"), "request": req("CREATE", "tenant-alice", "kube-admin", "system:masters")}, none},
		"ObjectOwnProviderConfig":          {"object-provider-config-policy", map[string]any{"object": object("ProviderConfig", "function-tenant-gateway"), "request": user}, none},
		"ObjectOtherClusterProviderConfig": {"object-provider-config-policy", map[string]any{"object": object("ClusterProviderConfig", "tenant-alice"), "request": user}, none},
		"ClusterObjectOurConfigFromUser":   {"object-provider-config-policy", map[string]any{"object": object("", "function-tenant-gateway"), "request": req("CREATE", "", "alice@example.com", "system:authenticated")}, pc},
		"ClusterObjectDefaultFromUser":     {"object-provider-config-policy", map[string]any{"object": object("", "default"), "request": req("CREATE", "", "alice@example.com", "system:authenticated")}, none},

		// The wildcard replica's source, read by the provider for a tenant's
		// own Object whatever its provider config.
		"ObjectPatchesFromSource":        {"object-provider-config-policy", map[string]any{"object": withRefs("patchesFrom", [2]string{"tenant-root", "wildcard-tls"}), "request": user}, ref},
		"ObjectDependsOnOtherTenant":     {"object-provider-config-policy", map[string]any{"object": withRefs("dependsOn", [2]string{"tenant-bob", "wildcard-tls"}), "request": user}, ref},
		"ObjectReferenceNoNamespace":     {"object-provider-config-policy", map[string]any{"object": withRefs("patchesFrom", [2]string{"-", "wildcard-tls"}), "request": user}, ref},
		"ObjectOneForeignReference":      {"object-provider-config-policy", map[string]any{"object": withRefs("patchesFrom", [2]string{"tenant-alice", "mine"}, [2]string{"tenant-root", "wildcard-tls"}), "request": user}, ref},
		"ObjectReferencesOwnNamespace":   {"object-provider-config-policy", map[string]any{"object": withRefs("patchesFrom", [2]string{"tenant-alice", "mine"}), "request": user}, none},
		"ObjectForeignRefFromCrossplane": {"object-provider-config-policy", map[string]any{"object": withRefs("patchesFrom", [2]string{"tenant-root", "wildcard-tls"}), "request": crossplane}, none},

		// A ProviderConfig of the tenant's own, run by the provider in its
		// pod as its service account, which every policy trusts by name.
		"PCInjectedIdentityFromUser": {"provider-config-writer-policy", map[string]any{"object": providerConfig("InjectedIdentity"), "request": user}, pcw},
		"PCFilesystemFromUser":       {"provider-config-writer-policy", map[string]any{"object": providerConfig("Filesystem"), "request": user}, pcw},
		"PCOwnSecretFromUser":        {"provider-config-writer-policy", map[string]any{"object": providerConfig("Secret"), "request": user}, pcw},
		"PCUpdatedByUser":            {"provider-config-writer-policy", map[string]any{"object": providerConfig("Secret"), "oldObject": providerConfig("Secret"), "request": req("UPDATE", "tenant-alice", "alice@example.com", "system:authenticated")}, pcw},
		"PCFromOtherFunction":        {"provider-config-writer-policy", map[string]any{"object": providerConfig("InjectedIdentity"), "request": function}, pcw},
		"PCFromAdmin":                {"provider-config-writer-policy", map[string]any{"object": providerConfig("InjectedIdentity"), "request": req("CREATE", "tenant-alice", "kube-admin", "system:masters")}, none},
		"PCFromCozySystem":           {"provider-config-writer-policy", map[string]any{"object": providerConfig("Secret"), "request": req("CREATE", "tenant-alice", "system:serviceaccount:cozy-system:cozystack", "system:serviceaccounts", "system:serviceaccounts:cozy-system")}, none},

		"TGWCreatedByTenant":         {"tenantgateway-writer-policy", map[string]any{"object": tgw, "request": user}, tw},
		"TGWUpdatedByTenant":         {"tenantgateway-writer-policy", map[string]any{"object": tgw, "oldObject": tgw, "request": req("UPDATE", "tenant-alice", "alice@example.com", "system:authenticated")}, tw},
		"TGWDeletedByTenant":         {"tenantgateway-writer-policy", map[string]any{"oldObject": tgw, "request": req("DELETE", "tenant-alice", "alice@example.com", "system:authenticated")}, tw},
		"TGWFromOtherFunction":       {"tenantgateway-writer-policy", map[string]any{"object": tgw, "request": function}, tw},
		"TGWFromProviderKubernetes":  {"tenantgateway-writer-policy", map[string]any{"object": tgw, "request": as("CREATE", "tenant-alice", "tenant-gateway-provider-kubernetes")}, none},
		"TGWUpdatedByCrossplane":     {"tenantgateway-writer-policy", map[string]any{"object": tgw, "oldObject": tgw, "request": as("UPDATE", "tenant-alice", "crossplane")}, none},
		"TGWDeletedByNamespaceCtrl":  {"tenantgateway-writer-policy", map[string]any{"oldObject": tgw, "request": req("DELETE", "tenant-alice", "system:serviceaccount:kube-system:namespace-controller", "system:serviceaccounts", "system:serviceaccounts:kube-system")}, none},
		"TGWFromAdmin":               {"tenantgateway-writer-policy", map[string]any{"object": tgw, "request": req("CREATE", "tenant-alice", "kube-admin", "system:masters")}, none},
		"TGWOutsideTenantNamespaces": {"tenantgateway-writer-policy", map[string]any{"object": tgw, "request": req("CREATE", "cozy-system", "alice@example.com")}, "not matched"},

		// Cluster administrators in kubeadm's group, not in system:masters:
		// trusted by the shipped setting, every policy.
		"L3KubeadmAdminSetsHost":          {"tenant-host-policy", map[string]any{"object": tenant("customer1.example"), "request": kubeadmAdmin("CREATE", "tenant-root")}, none},
		"L4KubeadmAdminSetsLabel":         {"namespace-host-label-policy", map[string]any{"object": nsWith("x.example.org"), "oldObject": nsWith("y.example.org"), "request": kubeadmAdmin("UPDATE", "")}, none},
		"L5HostlessFromKubeadmAdmin":      {"route-hostname-policy", map[string]any{"object": hostless, "namespaceObject": alice, "request": kubeadmAdmin("CREATE", "tenant-alice")}, none},
		"L5TLSHostlessFromKubeadmAdmin":   {"route-hostname-policy-tls", map[string]any{"object": hostless, "namespaceObject": alice, "request": kubeadmAdmin("CREATE", "tenant-alice")}, none},
		"L5GRPCHostlessFromKubeadmAdmin":  {"route-hostname-policy-grpc", map[string]any{"object": hostless, "namespaceObject": alice, "request": kubeadmAdmin("CREATE", "tenant-alice")}, none},
		"ObjectOurConfigFromKubeadmAdmin": {"object-provider-config-policy", map[string]any{"object": object("ClusterProviderConfig", "function-tenant-gateway"), "request": kubeadmAdmin("CREATE", "tenant-alice")}, none},
		"PCFromKubeadmAdmin":              {"provider-config-writer-policy", map[string]any{"object": providerConfig("InjectedIdentity"), "request": kubeadmAdmin("CREATE", "tenant-alice")}, none},
		"TGWFromKubeadmAdmin":             {"tenantgateway-writer-policy", map[string]any{"object": tgw, "request": kubeadmAdmin("CREATE", "tenant-alice")}, none},
		"TGWDeletedByKubeadmAdmin":        {"tenantgateway-writer-policy", map[string]any{"oldObject": tgw, "request": kubeadmAdmin("DELETE", "tenant-alice")}, none},
		// Who the setting does not name is not trusted: an administrators'
		// group it does not list, the account upstream provider-kubernetes
		// examples give a platform's own provider.
		"TGWFromUnlistedAdminGroup":     {"tenantgateway-writer-policy", map[string]any{"object": tgw, "request": oidcAdmin}, tw},
		"L4PlatformsOwnProviderAccount": {"namespace-host-label-policy", map[string]any{"object": nsWith("dashboard.example.org"), "oldObject": nsWith("x.example.org"), "request": as("UPDATE", "", "provider-kubernetes")}, l4},
		// Without the setting every policy that reads it denies, whoever
		// asks; the one that trusts nobody does not read it.
		"NoSettingDeniesAdmin":     {"tenantgateway-writer-policy", map[string]any{"object": tgw, "request": req("CREATE", "tenant-alice", "kube-admin", "system:masters"), "params": nil}, noParams},
		"NoSettingDeniesRoutes":    {"route-hostname-policy", map[string]any{"object": route("harbor.alice.example.org"), "namespaceObject": alice, "request": user, "params": nil}, noParams},
		"NoSettingGatewayUnharmed": {"gateway-hostname-policy", map[string]any{"object": gw("alice.example.org"), "namespaceObject": alice, "request": user, "params": nil}, none},

		// The setting's own shape.
		"SettingShipped":          {"trusted-callers-setting-policy", map[string]any{"object": setting(t, nil), "request": kubeadmAdmin("CREATE", "")}, none},
		"SettingUsersNotAList":    {"trusted-callers-setting-policy", map[string]any{"object": setting(t, map[string]any{"users": "system:serviceaccount:crossplane-system:crossplane"}), "request": kubeadmAdmin("UPDATE", "")}, su},
		"SettingGroupsEmptyEntry": {"trusted-callers-setting-policy", map[string]any{"object": setting(t, map[string]any{"groups": []any{"system:masters", ""}}), "request": kubeadmAdmin("UPDATE", "")}, sg},
		"SettingGroupsNumber":     {"trusted-callers-setting-policy", map[string]any{"object": setting(t, map[string]any{"groups": []any{float64(1)}}), "request": kubeadmAdmin("UPDATE", "")}, sg},
		"SettingEmpty":            {"trusted-callers-setting-policy", map[string]any{"object": setting(t, map[string]any{}), "request": kubeadmAdmin("UPDATE", "")}, none},
		"OtherEnvironmentConfig":  {"trusted-callers-setting-policy", map[string]any{"object": map[string]any{"metadata": map[string]any{"name": "tenant-gateway-platform"}, "data": map[string]any{"users": "x"}}, "request": kubeadmAdmin("UPDATE", "")}, "not matched"},
	}
	// The deletion guard: a DELETE of the Configuration or an XRD, by an
	// administrator or the garbage collector, of the object as stored.
	const guard = "deleting the Configuration configuration-tenant-gateway or the XRD of TenantGateways or XTenants deletes every TenantGateway and Tenant, with every tenant namespace and Gateway; to confirm, annotate the object with gateway.cozystack.io/confirm-deletion set to its own name (docs/operations.md, What never to delete)"
	del := func(resource string, r map[string]any) map[string]any {
		r["resource"] = map[string]any{"resource": resource}
		return r
	}
	gc := func() map[string]any {
		u, g := sa("kube-system", "generic-garbage-collector")
		return del("configurations", req("DELETE", "", u, g...))
	}
	stored := func(name, confirm string, spec map[string]any) map[string]any {
		md := map[string]any{"name": name}
		if confirm != "" {
			md["annotations"] = map[string]any{"gateway.cozystack.io/confirm-deletion": confirm}
		}
		return map[string]any{"metadata": md, "spec": spec}
	}
	const xrdTGW, xrdTenant, cfg = "tenantgateways.gateway.cozystack.io", "xtenants.apps.cozystack.io", "cozystack-configuration-tenant-gateway"
	pkg := func(ref string) map[string]any { return map[string]any{"package": ref} }
	for name, tc := range map[string]struct {
		policy string
		in     map[string]any
		want   string
	}{
		"GuardXRDUnconfirmed":           {"deletion-guard-policy", map[string]any{"oldObject": stored(xrdTGW, "", nil), "request": del("compositeresourcedefinitions", kubeadmAdmin("DELETE", ""))}, guard},
		"GuardXRDUnconfirmedMasters":    {"deletion-guard-policy", map[string]any{"oldObject": stored(xrdTenant, "", nil), "request": del("compositeresourcedefinitions", req("DELETE", "", "kube-admin", "system:masters"))}, guard},
		"GuardXRDConfirmed":             {"deletion-guard-policy", map[string]any{"oldObject": stored(xrdTGW, xrdTGW, nil), "request": del("compositeresourcedefinitions", kubeadmAdmin("DELETE", ""))}, none},
		"GuardXRDConfirmedWithYes":      {"deletion-guard-policy", map[string]any{"oldObject": stored(xrdTGW, "true", nil), "request": del("compositeresourcedefinitions", kubeadmAdmin("DELETE", ""))}, guard},
		"GuardXRDOtherXRDsConfirmation": {"deletion-guard-policy", map[string]any{"oldObject": stored(xrdTenant, xrdTGW, nil), "request": del("compositeresourcedefinitions", kubeadmAdmin("DELETE", ""))}, guard},
		"GuardConfigurationByGC":        {"deletion-guard-policy", map[string]any{"oldObject": stored(cfg, "", pkg("ghcr.io/cozystack/configuration-tenant-gateway:v0.1.0")), "request": gc()}, guard},
		"GuardConfigurationMirror":      {"deletion-guard-policy", map[string]any{"oldObject": stored("other-name", "", pkg("registry.example.internal/cozystack/configuration-tenant-gateway@sha256:0123")), "request": gc()}, guard},
		"GuardConfigurationConfirmed":   {"deletion-guard-policy", map[string]any{"oldObject": stored(cfg, cfg, pkg("ghcr.io/cozystack/configuration-tenant-gateway:v0.1.0")), "request": gc()}, none},
		"GuardOtherConfiguration":       {"deletion-guard-policy", map[string]any{"oldObject": stored("platform-ref", "", pkg("xpkg.crossplane.io/acme/configuration-tenant-gateway-extras:v1")), "request": gc()}, "not matched"},
	} {
		cases[name] = tc
	}
	defaults := setting(t, nil)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := map[string]any{"oldObject": nil, "namespaceObject": nil, "params": defaults}
			for k, v := range tc.in {
				in[k] = v
			}
			if got := admit(t, p[tc.policy], in); got != tc.want {
				t.Errorf("%s: want %q, got %q", tc.policy, tc.want, got)
			}
		})
	}
}

// TestMatches: each policy judges the requests it must, by its
// matchConstraints as the API server matches them (group, version,
// resource or resource/subresource, operation): a status write is a request
// for the subresource, which a rule naming only the resource does not match.
func TestMatches(t *testing.T) {
	p := load(t)
	cases := []struct {
		policy, group, version, resource, op string
		want                                 bool
	}{
		{"tenantgateway-writer-policy", "gateway.cozystack.io", "v1alpha1", "tenantgateways", "CREATE", true},
		{"tenantgateway-writer-policy", "gateway.cozystack.io", "v1alpha1", "tenantgateways", "DELETE", true},
		{"tenantgateway-writer-policy", "gateway.cozystack.io", "v1alpha1", "tenantgateways/status", "UPDATE", true},
		{"tenantgateway-writer-policy", "gateway.cozystack.io", "v1beta1", "tenantgateways", "UPDATE", true},
		{"object-provider-config-policy", "kubernetes.m.crossplane.io", "v1alpha1", "objects", "CREATE", true},
		{"object-provider-config-policy", "kubernetes.crossplane.io", "v1alpha2", "objects", "UPDATE", true},
		{"provider-config-writer-policy", "kubernetes.m.crossplane.io", "v1alpha1", "providerconfigs", "CREATE", true},
		{"provider-config-writer-policy", "kubernetes.m.crossplane.io", "v1alpha1", "providerconfigs", "UPDATE", true},
		{"tenant-host-policy", "apps.cozystack.io", "v1alpha1", "tenants", "UPDATE", true},
		{"route-hostname-policy", "gateway.networking.k8s.io", "v1", "httproutes", "CREATE", true},
		// A rule naming only the resource matches no write of its status
		// subresource, and no operation it does not list.
		{"route-hostname-policy", "gateway.networking.k8s.io", "v1", "httproutes/status", "UPDATE", false},
		{"route-hostname-policy", "gateway.networking.k8s.io", "v1", "httproutes", "DELETE", false},
		{"tenant-host-policy", "apps.cozystack.io", "v1alpha1", "tenants/status", "UPDATE", false},
		{"trusted-callers-setting-policy", "apiextensions.crossplane.io", "v1beta1", "environmentconfigs", "CREATE", true},
		{"trusted-callers-setting-policy", "apiextensions.crossplane.io", "v1beta1", "environmentconfigs", "UPDATE", true},
		{"deletion-guard-policy", "apiextensions.crossplane.io", "v1", "compositeresourcedefinitions", "DELETE", true},
		{"deletion-guard-policy", "pkg.crossplane.io", "v1", "configurations", "DELETE", true},
		{"deletion-guard-policy", "apiextensions.crossplane.io", "v1", "compositeresourcedefinitions", "UPDATE", false},
		{"deletion-guard-policy", "pkg.crossplane.io", "v1", "configurations", "UPDATE", false},
	}
	for _, c := range cases {
		if p[c.policy] == nil {
			t.Errorf("no policy %s", c.policy)
			continue
		}
		if got := matches(p[c.policy], c.group, c.version, c.resource, c.op); got != c.want {
			t.Errorf("%s matches %s %s %s/%s: %v, want %v", c.policy, c.op, c.resource, c.group, c.version, got, c.want)
		}
	}
}

func matches(p *admissionv1.ValidatingAdmissionPolicy, group, version, resource, op string) bool {
	return Matches(p, group, version, resource, op)
}

func sorted(l []string) []string {
	out := append([]string(nil), l...)
	sort.Strings(out)
	return out
}

// TestTrustedCallersSetting: who each policy trusts is what the setting
// says, and only that. The trusted expression of every policy is evaluated
// for callers under the shipped setting and under settings an operator may
// write.
func TestTrustedCallersSetting(t *testing.T) {
	policies := load(t)
	const (
		kubeAdmin    = "kube-admin"
		kubeadmAdmin = "kubernetes-admin"
		oidcAdmin    = "oidc:ops@example.com"
		tenant       = "alice@example.com"
		crossplane   = "system:serviceaccount:crossplane-system:crossplane"
		provider     = "system:serviceaccount:crossplane-system:tenant-gateway-provider-kubernetes"
		otherProv    = "system:serviceaccount:crossplane-system:provider-kubernetes"
		nsController = "system:serviceaccount:kube-system:namespace-controller"
	)
	groups := map[string][]string{
		kubeAdmin:    {"system:masters", "system:authenticated"},
		kubeadmAdmin: {"kubeadm:cluster-admins", "system:authenticated"},
		oidcAdmin:    {"oidc:platform-admins", "system:authenticated"},
		tenant:       {"tenant-alice-admins", "system:authenticated"},
		crossplane:   {"system:serviceaccounts", "system:serviceaccounts:crossplane-system", "system:authenticated"},
		provider:     {"system:serviceaccounts", "system:serviceaccounts:crossplane-system", "system:authenticated"},
		otherProv:    {"system:serviceaccounts", "system:serviceaccounts:crossplane-system", "system:authenticated"},
		nsController: {"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"},
	}
	everyone := []string{crossplane, kubeAdmin, kubeadmAdmin, nsController, oidcAdmin, otherProv, provider, tenant}
	noData := setting(t, nil)
	delete(noData, "data")
	cases := map[string]struct {
		params  map[string]any
		trusted []string
	}{
		"Shipped": {setting(t, nil), []string{crossplane, kubeAdmin, kubeadmAdmin, nsController, provider}},
		"OIDCAdminsOnly": {setting(t, map[string]any{"groups": []any{"oidc:platform-admins"}, "users": []any{crossplane, provider}}),
			[]string{crossplane, oidcAdmin, provider}},
		"UsersOnly": {setting(t, map[string]any{"users": []any{tenant}}), []string{tenant}},
		"Empty":     {setting(t, map[string]any{}), nil},
		"NoData":    {noData, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for pname, p := range policies {
				for _, v := range p.Spec.Variables {
					if v.Name != "trusted" {
						continue
					}
					var got []string
					for _, u := range everyone {
						in := map[string]any{"request": req("CREATE", "tenant-alice", u, groups[u]...), "params": tc.params}
						if eval(t, v.Expression, in) == true {
							got = append(got, u)
						}
					}
					if diff := cmp.Diff(tc.trusted, got); diff != "" {
						t.Errorf("%s trusts -want, +got:\n%s", pname, diff)
					}
				}
			}
		})
	}
}

// TestNamespaceBinding: namespace-host-label-policy judges only writes of
// namespaces that carry the host label before or after, as the API server
// matches its binding's object selector (against the old and the new
// object), so a missing setting never blocks other namespaces.
func TestNamespaceBinding(t *testing.T) {
	_, bindings := loadWithBindings(t)
	bd := bindings["namespace-host-label-policy"]
	if bd == nil || bd.Spec.MatchResources == nil || bd.Spec.MatchResources.ObjectSelector == nil {
		t.Fatal("the binding of namespace-host-label-policy has no object selector")
	}
	sel, err := metav1.LabelSelectorAsSelector(bd.Spec.MatchResources.ObjectSelector)
	if err != nil {
		t.Fatal(err)
	}
	host := labels.Set{"namespace.cozystack.io/host": "x.example.org"}
	other := labels.Set{"team": "a"}
	cases := map[string]struct {
		old, new labels.Set
		want     bool
	}{
		"NoHostLabel":      {other, other, false},
		"Created":          {nil, host, true},
		"CreatedWithout":   {nil, other, false},
		"LabelSet":         {other, host, true},
		"LabelRemoved":     {host, other, true},
		"LabelKept":        {host, host, true},
		"EmptyValueIsSet":  {nil, labels.Set{"namespace.cozystack.io/host": ""}, true},
		"GatewayLabelOnly": {nil, labels.Set{"namespace.cozystack.io/gateway": "tenant-root"}, false},
	}
	for name, tc := range cases {
		if got := (tc.old != nil && sel.Matches(tc.old)) || sel.Matches(tc.new); got != tc.want {
			t.Errorf("%s: judged %v, want %v", name, got, tc.want)
		}
	}
}
