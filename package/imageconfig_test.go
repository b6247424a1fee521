package packages

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xpkg"
	pkgmetav1 "github.com/crossplane/crossplane/apis/v2/pkg/meta/v1"
	"github.com/crossplane/crossplane/apis/v2/pkg/v1beta1"
)

// mirror is the prefix the tests give the mirror variant, as its sed does.
const mirror = "mirror.example.net:5000/"

// The names the shipped ImageConfigs and DeploymentRuntimeConfig have
// (examples/cluster/provider-kubernetes-runtime.yaml and
// mirror/image-configs.yaml, docs/design.md "Packages").
const (
	runtimeConfig            = "tenant-gateway-provider-kubernetes"
	runtimeImageConfig       = "tenant-gateway-provider-kubernetes-runtime"
	runtimeMirrorImageConfig = "tenant-gateway-provider-kubernetes-runtime-mirror"
	rewriteFunction          = "tenant-gateway-mirror-function"
	rewriteConfiguration     = "tenant-gateway-mirror-configuration"
	rewriteProvider          = "tenant-gateway-mirror-provider-kubernetes"
)

// imageConfigs lists ImageConfigs to crossplane-runtime's ImageConfigStore
// as the API server would. The store only lists.
type imageConfigs struct {
	client.Client

	items []v1beta1.ImageConfig
}

func (c imageConfigs) List(_ context.Context, l client.ObjectList, _ ...client.ListOption) error {
	l.(*v1beta1.ImageConfigList).Items = c.items
	return nil
}

// shipped decodes the ImageConfigs of a file of examples/cluster, with
// registry.example.internal/ replaced by the mirror's prefix.
func shipped(t *testing.T, elem ...string) []v1beta1.ImageConfig {
	t.Helper()
	var out []v1beta1.ImageConfig
	for _, doc := range documents(t, append([]string{"examples", "cluster"}, elem...)...) {
		doc = []byte(strings.ReplaceAll(string(doc), "registry.example.internal/", mirror))
		var kind struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &kind); err != nil {
			t.Fatal(err)
		}
		if kind.Kind != v1beta1.ImageConfigKind {
			continue
		}
		ic := v1beta1.ImageConfig{}
		strict(t, doc, &ic)
		out = append(out, ic)
	}
	if len(out) == 0 {
		t.Fatalf("examples/cluster/%s holds no ImageConfig", strings.Join(elem, "/"))
	}
	return out
}

// applied is what Crossplane v2.4 does with a package reference: the
// package client rewrites it with the best rewrite ImageConfig and records
// the resolved reference (source and identifier) on the revision
// (crossplane-runtime xpkg.CachedClient.Get, Package.ResolvedRef); the
// runtime reconciler picks the runtime ImageConfig for that resolved
// reference (internal/controller/pkg/runtime, builderOptions).
type applied struct {
	// Rewrite is the rewrite ImageConfig applied, Resolved the reference
	// pulled.
	Rewrite, Resolved string
	// Runtime is the runtime ImageConfig applied, Config the
	// DeploymentRuntimeConfig it names; both empty when none matches, and
	// the package then runs with its own runtimeConfigRef (default).
	Runtime, Config string
}

func apply(t *testing.T, ics []v1beta1.ImageConfig, ref string) applied {
	t.Helper()
	ctx := context.Background()
	store := xpkg.NewImageConfigStore(imageConfigs{items: ics}, "crossplane-system")
	var a applied
	rewrite, rewritten, err := store.RewritePath(ctx, ref)
	if err != nil {
		t.Fatalf("cannot rewrite %s: %v", ref, err)
	}
	resolved := ref
	if rewritten != "" {
		a.Rewrite, resolved = rewrite, rewritten
	}
	r, err := name.ParseReference(resolved, name.StrictValidation)
	if err != nil {
		t.Fatalf("%s resolves to %s, which does not parse: %v", ref, resolved, err)
	}
	a.Resolved = xpkg.BuildPackageRef(xpkg.ParsePackageSourceFromReference(r), r.Identifier())
	runtime, rt, err := store.RuntimeConfigFor(ctx, a.Resolved)
	if err != nil {
		t.Fatalf("cannot find the runtime ImageConfig of %s: %v", a.Resolved, err)
	}
	if rt != nil && rt.ConfigReference != nil {
		a.Runtime, a.Config = runtime, rt.ConfigReference.Name
	}
	return a
}

// TestImageConfigsMatchOnlyOurs: the shipped ImageConfigs, fed to
// crossplane-runtime's ImageConfigStore as Crossplane v2.4 feeds them, give
// the provider-kubernetes this project installs its runtime config (the
// service account the RBAC and the admission policies name), with public
// and mirror-rewritten sources, and leave every other package as it was: a
// provider-kubernetes the platform already runs, from the same upstream
// source under another name, from another registry, through the platform's
// own mirror or with the platform's own runtime ImageConfig, keeps its own
// runtime config and pulls from where it did.
func TestImageConfigsMatchOnlyOurs(t *testing.T) {
	provider := *dependency(t, pkgmetav1.ProviderKind).Package
	fn := *dependency(t, pkgmetav1.FunctionKind).Package
	const (
		configuration = "ghcr.io/cozystack/configuration-tenant-gateway"
		digest        = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		// The platform's own provider-kubernetes, as upstream publishes it.
		upstream = "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes"
	)
	mirrored := func(ref string) string { _, path, _ := strings.Cut(ref, "/"); return mirror + path }

	public := shipped(t, "provider-kubernetes-runtime.yaml")
	ours := applied{Runtime: runtimeImageConfig, Config: runtimeConfig}
	withMirror := append(append([]v1beta1.ImageConfig{}, public...), shipped(t, "mirror", "image-configs.yaml")...)
	// What a platform may already have: its own mirror of everything, and
	// its own runtime config for its own providers.
	platformMirror := v1beta1.ImageConfig{Spec: v1beta1.ImageConfigSpec{
		MatchImages:  []v1beta1.ImageMatch{{Type: v1beta1.Prefix, Prefix: "xpkg.crossplane.io/"}},
		RewriteImage: &v1beta1.ImageRewrite{Prefix: mirror},
	}}
	platformMirror.SetName("platform-mirror")
	platformRuntime := v1beta1.ImageConfig{Spec: v1beta1.ImageConfigSpec{
		MatchImages: []v1beta1.ImageMatch{{Type: v1beta1.Prefix, Prefix: "xpkg.crossplane.io/crossplane-contrib/"}},
		Runtime:     &v1beta1.ImageRuntime{ConfigReference: &v1beta1.RuntimeConfigReference{Name: "platform-providers"}},
	}}
	platformRuntime.SetName("platform-providers")

	cases := map[string]struct {
		ics  []v1beta1.ImageConfig
		ref  string
		want applied
	}{
		"OurProvider":          {public, provider + ":v1.2.1", with(ours, "", provider+":v1.2.1")},
		"OurProviderByDigest":  {public, provider + digest, with(ours, "", provider+digest)},
		"OurFunction":          {public, fn + ":v0.1.0", applied{Resolved: fn + ":v0.1.0"}},
		"OurConfiguration":     {public, configuration + ":v0.1.0", applied{Resolved: configuration + ":v0.1.0"}},
		"PlatformsProvider":    {public, upstream + ":v1.3.1", applied{Resolved: upstream + ":v1.3.1"}},
		"PlatformsFromUpbound": {public, "xpkg.upbound.io/crossplane-contrib/provider-kubernetes:v0.18.0", applied{Resolved: "xpkg.upbound.io/crossplane-contrib/provider-kubernetes:v0.18.0"}},
		"LongerRepository":     {public, provider + "-extra:v1.0.0", applied{Resolved: provider + "-extra:v1.0.0"}},
		"PlatformsRuntime":     {append([]v1beta1.ImageConfig{platformRuntime}, public...), upstream + ":v1.3.1", applied{Resolved: upstream + ":v1.3.1", Runtime: "platform-providers", Config: "platform-providers"}},
		"OursBesidePlatforms":  {append([]v1beta1.ImageConfig{platformRuntime}, public...), provider + ":v1.2.1", with(ours, "", provider+":v1.2.1")},

		"MirrorOurProvider": {withMirror, provider + ":v1.2.1", applied{
			Rewrite: rewriteProvider, Resolved: mirrored(provider) + ":v1.2.1",
			Runtime: runtimeMirrorImageConfig, Config: runtimeConfig,
		}},
		"MirrorOurProviderByDigest": {withMirror, provider + digest, applied{
			Rewrite: rewriteProvider, Resolved: mirrored(provider) + digest,
			Runtime: runtimeMirrorImageConfig, Config: runtimeConfig,
		}},
		"MirrorOurFunction":      {withMirror, fn + ":v0.1.0", applied{Rewrite: rewriteFunction, Resolved: mirrored(fn) + ":v0.1.0"}},
		"MirrorOurConfiguration": {withMirror, configuration + ":v0.1.0", applied{Rewrite: rewriteConfiguration, Resolved: mirrored(configuration) + ":v0.1.0"}},
		"MirrorPlatformsProvider": {append([]v1beta1.ImageConfig{platformMirror}, withMirror...), upstream + ":v1.3.1", applied{
			Rewrite: "platform-mirror", Resolved: mirrored(upstream) + ":v1.3.1",
		}},
		"MirrorPlatformsProviderSamePath": {withMirror, mirror + "crossplane-contrib/provider-kubernetes:v1.3.1", applied{Resolved: mirror + "crossplane-contrib/provider-kubernetes:v1.3.1"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, apply(t, tc.ics, tc.ref)); diff != "" {
				t.Errorf("%s: -want, +got:\n%s", tc.ref, diff)
			}
		})
	}
}

// with is a with its rewrite and resolved reference set.
func with(a applied, rewrite, resolved string) applied {
	a.Rewrite, a.Resolved = rewrite, resolved
	return a
}
