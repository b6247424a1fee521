package apis

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/go-cmp/cmp"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	fnv1beta1 "github.com/cozystack/function-tenant-gateway/apis/fn/v1beta1"
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/apis/internal/refgen"
	"github.com/cozystack/function-tenant-gateway/apis/internal/xrdgen"
)

// The packages controller-gen reads; importing them makes `go test` rerun
// these tests whenever the types change, instead of serving a cached pass.
var (
	_ = v1alpha1.TenantGateway{}
	_ = fnv1beta1.Input{}
	_ = appsv1alpha1.XTenant{}
)

// TestGeneratedFilesAreFresh regenerates the XRD and CRD YAML from the Go
// types and fails when the committed files differ: run `make generate`.
func TestGeneratedFilesAreFresh(t *testing.T) {
	out, err := exec.Command("go", "tool", "controller-gen", "crd:crdVersions=v1", "paths=./...", "output:crd:stdout").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok { //nolint:errorlint // Only for its stderr.
			stderr = ee.Stderr
		}
		t.Fatalf("controller-gen: %v\n%s", err, stderr)
	}
	files, err := xrdgen.Files(out)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join("..", path))
		if err != nil {
			t.Errorf("cannot read %s (run `make generate`): %v", path, err)
			continue
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s is stale; run `make generate` (-generated +committed):\n%s", path, diff)
		}
	}
}

// TestReferenceIsFresh regenerates docs/reference.md from the committed
// XRDs and CRD (TestGeneratedFilesAreFresh keeps those fresh), the platform
// settings and the function's flags, and fails when the committed page
// differs: run `make generate`.
func TestReferenceIsFresh(t *testing.T) {
	want, err := refgen.Generate("..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", refgen.Path))
	if err != nil {
		t.Fatalf("cannot read %s (run `make generate`): %v", refgen.Path, err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is stale; run `make generate` (-generated +committed):\n%s", refgen.Path, diff)
	}
}

// TestTenantGatewayXRD derives the CRD Crossplane would serve from the
// committed XRD, the way Crossplane does, and checks what operators rely on:
// the status fields the function writes survive (Crossplane prunes what the
// XRD does not declare), the short name and the printer columns.
func TestTenantGatewayXRD(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "package", "configuration", "tenantgateway", "definition.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	xrd := &xpv1.CompositeResourceDefinition{}
	if err := yaml.Unmarshal(b, xrd); err != nil {
		t.Fatal(err)
	}
	crd, err := xcrd.ForCompositeResource(xrd)
	if err != nil {
		t.Fatalf("Crossplane cannot derive a CRD from the XRD: %v", err)
	}
	if diff := cmp.Diff([]string{"tgw"}, crd.Spec.Names.ShortNames); diff != "" {
		t.Errorf("short names: -want, +got:\n%s", diff)
	}
	if got := string(crd.Spec.Scope); got != "Namespaced" {
		t.Errorf("scope: want Namespaced, got %s", got)
	}
	v := crd.Spec.Versions[0]
	cols := make([]string, 0, len(v.AdditionalPrinterColumns))
	for _, c := range v.AdditionalPrinterColumns {
		cols = append(cols, c.Name)
	}
	if diff := cmp.Diff([]string{"APEX", "MODE", "CLASS", "GATEWAY", "SYNCED", "READY", "COMPOSITION", "COMPOSITIONREVISION", "AGE"}, cols); diff != "" {
		t.Errorf("printer columns: -want, +got:\n%s", diff)
	}
	status := v.Schema.OpenAPIV3Schema.Properties["status"].Properties
	for _, f := range []string{"certMode", "listeners", "hostnames", "conflicts", "childApexes", "conditions"} {
		if _, ok := status[f]; !ok {
			t.Errorf("status.%s is not in the derived CRD: Crossplane would prune it", f)
		}
	}
	spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
	if diff := cmp.Diff([]string{"apex"}, spec.Required); diff != "" {
		t.Errorf("spec.required: -want, +got:\n%s", diff)
	}
	if got := len(spec.XValidations); got != 7 {
		t.Errorf("spec carries %d CEL rules, want 7 (dns01 block, 4 providers, existingSecret, acme)", got)
	}
}

// TestTenantGatewayACMERules evaluates the XRD's CEL rules about ACME
// servers on specs as admission sees them (defaults applied): spec.acme
// goes with a name of its own and only with one, and an External Account
// Binding has both halves. The function checks the same (fn/gateway
// validate.go); this keeps the two from drifting.
func TestTenantGatewayACMERules(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "package", "configuration", "tenantgateway", "definition.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	xrd := &xpv1.CompositeResourceDefinition{}
	if err := yaml.Unmarshal(b, xrd); err != nil {
		t.Fatal(err)
	}
	crd, err := xcrd.ForCompositeResource(xrd)
	if err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	eab := spec.Properties["acme"].Properties["externalAccountBinding"]
	env, err := cel.NewEnv(cel.Variable("self", cel.DynType))
	if err != nil {
		t.Fatal(err)
	}
	// failing returns the messages of the rules self fails.
	failing := func(t *testing.T, rules extv1.ValidationRules, self map[string]any) []string {
		t.Helper()
		var out []string
		for _, r := range rules {
			ast, iss := env.Compile(r.Rule)
			if iss.Err() != nil {
				t.Fatalf("rule %q does not compile: %v", r.Rule, iss.Err())
			}
			prg, err := env.Program(ast)
			if err != nil {
				t.Fatal(err)
			}
			v, _, err := prg.Eval(map[string]any{"self": self})
			if err != nil {
				t.Fatalf("rule %q: %v", r.Rule, err)
			}
			if v.Value() != true {
				out = append(out, r.Message)
			}
		}
		return out
	}
	const acmeRule = "spec.acme defines the ACME server when spec.issuerName is a name of its own, and only then: it is required for any spec.issuerName other than letsencrypt-prod and letsencrypt-stage, and forbidden with those"
	server := map[string]any{"server": "https://acme.corp.example/directory"}
	specs := map[string]struct {
		spec map[string]any
		want []string
	}{
		"Builtin":           {spec: map[string]any{"certMode": "http01", "issuerName": "letsencrypt-prod"}},
		"OwnServer":         {spec: map[string]any{"certMode": "http01", "issuerName": "corp-ca", "acme": server}},
		"OwnServerDNS01":    {spec: map[string]any{"certMode": "dns01", "issuerName": "corp-ca", "acme": server, "dns01": map[string]any{"provider": "cloudflare", "cloudflare": map[string]any{}}}},
		"ServerBesideProd":  {spec: map[string]any{"certMode": "http01", "issuerName": "letsencrypt-prod", "acme": server}, want: []string{acmeRule}},
		"ServerBesideStage": {spec: map[string]any{"certMode": "dns01", "issuerName": "letsencrypt-stage", "acme": server, "dns01": map[string]any{"provider": "cloudflare", "cloudflare": map[string]any{}}}, want: []string{acmeRule}},
		"NameWithoutServer": {spec: map[string]any{"certMode": "http01", "issuerName": "corp-ca"}, want: []string{acmeRule}},
		"EdgeReadsNoIssuer": {spec: map[string]any{"certMode": "edge", "issuerName": "corp-ca"}},
	}
	for name, tc := range specs {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, failing(t, spec.XValidations, tc.spec)); diff != "" {
				t.Errorf("failing spec rules: -want, +got:\n%s", diff)
			}
		})
	}
	const eabRule = "an External Account Binding needs both keyID and keySecretRef"
	ref := map[string]any{"name": "corp-ca-eab", "key": "hmac"}
	bindings := map[string]struct {
		eab  map[string]any
		want []string
	}{
		"Both":       {eab: map[string]any{"keyID": "kid-1", "keySecretRef": ref}},
		"KeyIDOnly":  {eab: map[string]any{"keyID": "kid-1"}, want: []string{eabRule}},
		"SecretOnly": {eab: map[string]any{"keySecretRef": ref}, want: []string{eabRule}},
		"Neither":    {eab: map[string]any{}, want: []string{eabRule}},
	}
	for name, tc := range bindings {
		t.Run("ExternalAccountBinding"+name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, failing(t, eab.XValidations, tc.eab)); diff != "" {
				t.Errorf("failing externalAccountBinding rules: -want, +got:\n%s", diff)
			}
		})
	}
}

// TestTenantXRD derives the XR and claim CRDs Crossplane would serve for
// Tenants and checks that Cozystack's Tenant manifests fit them: a claim kind
// Tenant, LegacyCluster scope, and the fields a Cozystack Tenant sets.
func TestTenantXRD(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "package", "configuration-tenant", "tenant", "definition.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	xrd := &xpv1.CompositeResourceDefinition{}
	if err := yaml.Unmarshal(b, xrd); err != nil {
		t.Fatal(err)
	}
	if xrd.Spec.Scope == nil || *xrd.Spec.Scope != xpv1.CompositeResourceScopeLegacyCluster {
		t.Errorf("scope: want LegacyCluster (claims exist only there), got %v", xrd.Spec.Scope)
	}
	if _, err := xcrd.ForCompositeResource(xrd); err != nil {
		t.Fatalf("Crossplane cannot derive the XR CRD: %v", err)
	}
	claim, err := xcrd.ForCompositeResourceClaim(xrd)
	if err != nil {
		t.Fatalf("Crossplane cannot derive the claim CRD: %v", err)
	}
	if claim.Spec.Names.Kind != "Tenant" || claim.Spec.Group != "apps.cozystack.io" {
		t.Errorf("claim: want apps.cozystack.io Tenant, got %s %s", claim.Spec.Group, claim.Spec.Names.Kind)
	}
	spec := claim.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties
	for _, f := range []string{"host", "gateway", "gatewayClass", "resourceQuotas"} {
		if _, ok := spec[f]; !ok {
			t.Errorf("the claim has no spec.%s, which Cozystack's Tenants set", f)
		}
	}
	cols := map[string]string{}
	for _, c := range claim.Spec.Versions[0].AdditionalPrinterColumns {
		cols[c.Name] = c.JSONPath
	}
	for name, path := range map[string]string{
		"ACCEPTED":      ".status.conditions[?(@.type=='Accepted')].reason",
		"TENANTGATEWAY": ".status.conditions[?(@.type=='TenantGatewayReady')].reason",
		"READY":         ".status.conditions[?(@.type=='Ready')].status",
	} {
		if cols[name] != path {
			t.Errorf("the claim's printer column %s is %q, want %q (a tenant sees its refusal or readiness at a glance)", name, cols[name], path)
		}
	}
	status := claim.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties
	for _, f := range []string{"namespace", "apex", "gatewayNamespace", "gatewayClassName", "certMode"} {
		if _, ok := status[f]; !ok {
			t.Errorf("status.%s is not in the claim CRD: Crossplane would prune it", f)
		}
	}
}
