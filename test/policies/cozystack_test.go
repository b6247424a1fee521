package policies

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// cozystack are the ValidatingAdmissionPolicies Cozystack ships for the same
// layers, by name, with the requests each judges (as its documentation
// describes them), and the policy of ours that stands for it (see Admission
// layers in docs/design.md).
var cozystack = []struct {
	name, ours, group, resource string
	versions                    []string
}{
	{"cozystack-gateway-hostname-policy", "gateway-hostname-policy", "gateway.networking.k8s.io", "gateways", []string{"v1", "v1beta1"}},
	{"cozystack-tenant-host-policy", "tenant-host-policy", "apps.cozystack.io", "tenants", []string{"v1alpha1"}},
	{"cozystack-namespace-host-label-policy", "namespace-host-label-policy", "", "namespaces", []string{"v1"}},
	{"cozystack-route-hostname-policy", "route-hostname-policy", "gateway.networking.k8s.io", "httproutes", []string{"v1", "v1beta1"}},
	{"cozystack-route-hostname-policy-tls", "route-hostname-policy-tls", "gateway.networking.k8s.io", "tlsroutes", []string{"v1alpha2"}},
}

// TestCozystackNames: on a Cozystack cluster the platform's own policies
// keep their names, so applying ours overwrites none of them (an install
// never takes over objects it did not create); and each of Cozystack's has
// a counterpart here that judges every request it judges, so a runbook can
// follow the documented mapping, and removing Cozystack's leaves no write
// unjudged.
func TestCozystackNames(t *testing.T) {
	ours := load(t)
	names := objectNames(t)
	for _, c := range cozystack {
		if kinds := names[c.name]; len(kinds) > 0 {
			t.Errorf("%v %s has the name of Cozystack's own policy: applying it would overwrite the platform's object", kinds, c.name)
		}
		p := ours[c.ours]
		if p == nil {
			t.Errorf("no policy %s stands for Cozystack's %s", c.ours, c.name)
			continue
		}
		for _, v := range c.versions {
			for _, op := range []string{"CREATE", "UPDATE"} {
				if !matches(p, c.group, v, c.resource, op) {
					t.Errorf("%s does not judge %s %s %s/%s, which Cozystack's %s does", c.ours, op, c.resource, c.group, v, c.name)
				}
			}
		}
	}
}

// objectNames are the kinds of every object in admission-policies.yaml, by
// name.
func objectNames(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "cluster", "admission-policies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	out := map[string][]string{}
	for {
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := d.Decode(&o); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatal(err)
		}
		out[o.Metadata.Name] = append(out[o.Metadata.Name], o.Kind)
	}
}
