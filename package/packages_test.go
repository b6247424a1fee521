// Package packages checks the Function and Configuration packages against
// what Crossplane v2.4 does with them: the name it gives the Function it
// installs as a dependency (and so the name the Compositions must call), the
// version constraints it resolves, and which packages the shipped
// ImageConfigs apply to, through crossplane-runtime's own code.
package packages

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	pkgmetav1 "github.com/crossplane/crossplane/apis/v2/pkg/meta/v1"
)

// repoFile reads a file of the repository, one folder up from here.
func repoFile(t *testing.T, elem ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{".."}, elem...)...))
	if err != nil {
		t.Fatalf("cannot read %s: %v", filepath.Join(elem...), err)
	}
	return b
}

// documents splits a multi-document YAML file into its documents, as JSON.
func documents(t *testing.T, elem ...string) [][]byte {
	t.Helper()
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(repoFile(t, elem...)), 4096)
	var out [][]byte
	for {
		raw := map[string]any{}
		if err := d.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("cannot decode %s: %v", filepath.Join(elem...), err)
		}
		if len(raw) == 0 {
			continue
		}
		j, err := yaml.Marshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, j)
	}
}

// strict decodes one document into a typed object, refusing fields the type
// does not have, so that a misspelt field fails here and not on a cluster.
func strict(t *testing.T, doc []byte, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, into); err != nil {
		t.Fatalf("cannot decode %T: %v\n%s", into, err, doc)
	}
}

// configuration is the Configuration package's metadata.
func configuration(t *testing.T) *pkgmetav1.Configuration {
	t.Helper()
	c := &pkgmetav1.Configuration{}
	strict(t, repoFile(t, "package", "configuration", "crossplane.yaml"), c)
	return c
}

// dependency is the Configuration's dependency of kind.
func dependency(t *testing.T, kind string) pkgmetav1.Dependency {
	t.Helper()
	for _, d := range configuration(t).Spec.DependsOn {
		if d.Kind != nil && *d.Kind == kind && d.Package != nil {
			return d
		}
	}
	t.Fatalf("the Configuration has no %s dependency", kind)
	return pkgmetav1.Dependency{}
}
