package render

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite each scenario's expected.yaml from the rendered output")

// TestRender renders every user example (examples/) and test scenario
// (test/render/scenarios/) through the shipped
// Composition and XRD, and checks that the output equals the scenario's
// expected.yaml byte for byte, that a second render gives the same bytes, and
// that every rendered object passes `crossplane resource validate` against
// the Gateway API, cert-manager and our own schemas.
func TestRender(t *testing.T) {
	tools, err := ToolsFromEnv()
	if err != nil {
		if os.Getenv("FTG_REQUIRE_RENDER") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	root, err := RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	bin := os.Getenv(EnvFunction)
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "function")
		if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "fn", "cmd", "function")).CombinedOutput(); err != nil {
			t.Fatalf("cannot build the function: %v\n%s", err, out)
		}
	}
	var log bytes.Buffer
	fn, err := StartFunction(bin, &log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fn.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("function log:\n%s", log.String())
		}
	})

	schemas := t.TempDir()
	if err := SchemaDir(ctx, root, schemas); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()

	scenarios, err := Scenarios(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(scenarios) == 0 {
		t.Fatalf("no scenarios under %s or %s", ExamplesDir, ScenariosDir)
	}
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			got, err := Render(ctx, tools, root, sc, fn.Address)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join(sc.Dir, FileExpected)
			if *update {
				if err := os.WriteFile(golden, got, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("cannot read %s (run `make golden` to create it): %v", golden, err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("render of %s differs from %s (-want +got); run `make golden` if the change is meant:\n%s", sc.Path, FileExpected, diff)
			}

			again, err := Render(ctx, tools, root, sc, fn.Address)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, again) {
				t.Errorf("two renders of %s differ (-first +second):\n%s", sc.Path, cmp.Diff(string(got), string(again)))
			}

			if out, err := Validate(ctx, tools, schemas, got, cache); err != nil {
				t.Errorf("rendered objects of %s do not validate:\n%v", sc.Path, err)
			} else {
				t.Logf("%s", out)
			}
		})
	}
}
