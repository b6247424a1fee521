package render

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestExamplesIndexed: every user example has a README.md and a row in
// examples/README.md, and every row of the index names an example, so that
// a scenario added to examples/ without either is noticed (one that exists
// to test belongs under test/render/scenarios/).
func TestExamplesIndexed(t *testing.T) {
	root, examples := userExamples(t)
	index, err := os.ReadFile(filepath.Join(root, ExamplesDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(string(index), "\n") {
		if name, ok := strings.CutPrefix(line, "| ["); ok {
			if i := strings.Index(name, "]"); i > 0 {
				listed = append(listed, name[:i])
			}
		}
	}
	var have []string
	for _, ex := range examples {
		have = append(have, ex.Name)
		if _, err := os.Stat(filepath.Join(ex.Dir, "README.md")); err != nil {
			t.Errorf("%s has no README.md saying what it shows and how to render it", ex.Path)
		}
	}
	// The index lists examples in reading order; compare as sets.
	if diff := cmp.Diff(sorted(have), sorted(listed)); diff != "" {
		t.Errorf("examples/README.md does not index exactly the examples (-examples +indexed):\n%s", diff)
	}
}

// TestTenantClaims: where an example holds the Tenant claim a tenant writes
// (tenant.yaml), its xr.yaml is the XTenant Crossplane makes of that claim:
// crossplane render renders composite resources, not claims, so the render
// reads xr.yaml, and the two must not drift apart.
func TestTenantClaims(t *testing.T) {
	_, examples := userExamples(t)
	type object struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string            `json:"name"`
			Namespace string            `json:"namespace"`
			Labels    map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec map[string]any `json:"spec"`
	}
	read := func(t *testing.T, path string) object {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var o object
		if err := yaml.Unmarshal(b, &o); err != nil {
			t.Fatalf("cannot decode %s: %v", path, err)
		}
		return o
	}
	claims := 0
	for _, ex := range examples {
		claimFile := filepath.Join(ex.Dir, "tenant.yaml")
		if _, err := os.Stat(claimFile); err != nil {
			continue
		}
		claims++
		t.Run(ex.Name, func(t *testing.T) {
			claim := read(t, claimFile)
			xr := read(t, filepath.Join(ex.Dir, fileXR))
			want := map[string]string{
				"claim kind":      "Tenant",
				"XR kind":         "XTenant",
				"XR apiVersion":   claim.APIVersion,
				"claim-name":      claim.Metadata.Name,
				"claim-namespace": claim.Metadata.Namespace,
			}
			got := map[string]string{
				"claim kind":      claim.Kind,
				"XR kind":         xr.Kind,
				"XR apiVersion":   xr.APIVersion,
				"claim-name":      xr.Metadata.Labels["crossplane.io/claim-name"],
				"claim-namespace": xr.Metadata.Labels["crossplane.io/claim-namespace"],
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("xr.yaml is not the XTenant of tenant.yaml (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(claim.Spec, xr.Spec); diff != "" {
				t.Errorf("the spec of xr.yaml differs from the claim's (-claim +xr):\n%s", diff)
			}
		})
	}
	if claims == 0 {
		t.Error("no example holds a Tenant claim (tenant.yaml)")
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// userExamples is the repository's root and its user examples.
func userExamples(t *testing.T) (string, []Scenario) {
	t.Helper()
	root, err := RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := Examples(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, examples
}
