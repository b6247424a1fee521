package packages

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	pkgmetav1 "github.com/crossplane/crossplane/apis/v2/pkg/meta/v1"
)

// TestPackageSplit: the TenantGateway package, the one a Cozystack
// platform installs, defines no API in apps.cozystack.io (served there by
// cozystack-api, docs/migration.md); the Tenant API is a package of its
// own that depends on it, bounded like the Function.
func TestPackageSplit(t *testing.T) {
	groups := func(dir string) []string {
		var out []string
		root := filepath.Join("..", "package", dir)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
				return err
			}
			rel, _ := filepath.Rel("..", p)
			for _, doc := range documents(t, strings.Split(filepath.ToSlash(rel), "/")...) {
				var o struct {
					Kind string `json:"kind"`
					Spec struct {
						Group string `json:"group"`
						Names struct {
							Plural string `json:"plural"`
						} `json:"names"`
					} `json:"spec"`
				}
				if err := yaml.Unmarshal(doc, &o); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				if o.Kind == "CompositeResourceDefinition" {
					out = append(out, o.Spec.Names.Plural+"."+o.Spec.Group)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	if d := cmp.Diff([]string{"tenantgateways.gateway.cozystack.io"}, groups("configuration")); d != "" {
		t.Errorf("the TenantGateway package's XRDs (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"xtenants.apps.cozystack.io"}, groups("configuration-tenant")); d != "" {
		t.Errorf("the Tenant package's XRDs (-want +got):\n%s", d)
	}

	tenant := &pkgmetav1.Configuration{}
	strict(t, repoFile(t, "package", "configuration-tenant", "crossplane.yaml"), tenant)
	fn := dependency(t, "Function")
	var got []string
	for _, d := range tenant.Spec.DependsOn {
		if d.Kind != nil && d.Package != nil {
			got = append(got, *d.Kind+" "+*d.Package+" "+d.Version)
		}
	}
	want := []string{"Configuration ghcr.io/cozystack/configuration-tenant-gateway " + fn.Version}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the Tenant package's dependencies (-want +got):\n%s", d)
	}
}
