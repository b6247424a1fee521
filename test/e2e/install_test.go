//go:build e2e

package e2e

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What `crossplane xpkg install configuration` alone leaves behind (up.sh
// runs it after the manifests of examples/cluster/, as docs/install.md does).
var (
	gvkConfiguration = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Configuration"}
	gvkFunction      = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Function"}
	gvkProvider      = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Provider"}
	gvkProviderRev   = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "ProviderRevision"}
	gvkComposition   = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "Composition"}
	gvkMRAP          = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Kind: "ManagedResourceActivationPolicy"}
	gvkDeployment    = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	gvkCRB           = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}
)

// TestOneCommandInstall: the Tenant Configuration brought up the TenantGateway
// Configuration, and that one the Function under the
// name its Compositions call, provider-kubernetes with the service account
// of the DeploymentRuntimeConfig the mirror's runtime ImageConfig selects,
// and its own activation policy; and the example's ClusterRoleBinding binds
// exactly the account Crossplane gave the provider's Deployment.
func TestOneCommandInstall(t *testing.T) {
	type pkg struct{ kind, name, healthy string }
	var got []pkg
	for _, p := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{
		{gvkConfiguration, "cozystack-configuration-tenant-gateway-tenant"},
		{gvkConfiguration, "cozystack-configuration-tenant-gateway"},
		{gvkFunction, "cozystack-function-tenant-gateway"},
		{gvkProvider, "cozystack-tenant-gateway-provider-kubernetes"},
	} {
		u, _ := get(t, p.gvk, "", p.name)
		s, _, _ := condition(u, "Healthy")
		got = append(got, pkg{p.gvk.Kind, p.name, s})
	}
	want := []pkg{
		{"Configuration", "cozystack-configuration-tenant-gateway-tenant", "True"},
		{"Configuration", "cozystack-configuration-tenant-gateway", "True"},
		{"Function", "cozystack-function-tenant-gateway", "True"},
		{"Provider", "cozystack-tenant-gateway-provider-kubernetes", "True"},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(pkg{})); d != "" {
		t.Errorf("installed packages (-want +got):\n%s", d)
	}

	for _, name := range []string{"tenantgateway", "tenant"} {
		c, _ := get(t, gvkComposition, "", name)
		steps := slice(c, "spec", "pipeline")
		if len(steps) != 1 {
			t.Fatalf("Composition %s: want one pipeline step, got %v", name, steps)
		}
		ref, _ := steps[0].(map[string]any)["functionRef"].(map[string]any)
		if ref["name"] != "cozystack-function-tenant-gateway" {
			t.Errorf("Composition %s calls Function %v, not the one the Configuration installed", name, ref["name"])
		}
	}

	if mrap, ok := get(t, gvkMRAP, "", "configuration-tenant-gateway"); !ok {
		t.Error("the Configuration's ManagedResourceActivationPolicy configuration-tenant-gateway is missing")
	} else if d := cmp.Diff([]any{"objects.kubernetes.crossplane.io", "objects.kubernetes.m.crossplane.io"}, slice(mrap, "spec", "activate")); d != "" {
		t.Errorf("activation policy (-want +got):\n%s", d)
	}

	revs := list(t, gvkProviderRev, "", client.MatchingLabels{"pkg.crossplane.io/package": "cozystack-tenant-gateway-provider-kubernetes"})
	if len(revs) != 1 {
		t.Fatalf("want one provider-kubernetes revision, got %d", len(revs))
	}
	var runtimeRefs []string
	for _, r := range slice(&revs[0], "status", "appliedImageConfigRefs") {
		m, _ := r.(map[string]any)
		if m["reason"] == "ConfigureRuntime" {
			runtimeRefs = append(runtimeRefs, fmt.Sprint(m["name"]))
		}
	}
	if d := cmp.Diff([]string{"tenant-gateway-provider-kubernetes-runtime-mirror"}, runtimeRefs); d != "" {
		t.Errorf("ImageConfigs that configured the provider's runtime (-want +got):\n%s", d)
	}

	var sa string
	for _, d := range list(t, gvkDeployment, "crossplane-system") {
		for _, o := range d.GetOwnerReferences() {
			if o.Name == revs[0].GetName() {
				sa = str(&d, "spec", "template", "spec", "serviceAccountName")
			}
		}
	}
	if sa != "tenant-gateway-provider-kubernetes" {
		t.Errorf("the provider's Deployment runs as service account %q, want tenant-gateway-provider-kubernetes (examples/cluster/provider-kubernetes-runtime.yaml)", sa)
	}
	crb, _ := get(t, gvkCRB, "", "function-tenant-gateway:provider-kubernetes")
	wantSubjects := []any{map[string]any{"kind": "ServiceAccount", "name": sa, "namespace": "crossplane-system"}}
	if d := cmp.Diff(wantSubjects, slice(crb, "subjects")); d != "" {
		t.Errorf("ClusterRoleBinding function-tenant-gateway:provider-kubernetes does not bind the provider's account (-want +got):\n%s", d)
	}
}
