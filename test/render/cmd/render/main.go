// Command render renders the user examples under examples/ against the
// function and writes each output to <out>/<example>.yaml; with -all, the
// test scenarios under test/render/scenarios/ too. It starts the function
// binary on a loopback port and stops it by its PID when done.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cozystack/function-tenant-gateway/test/render"
)

func main() {
	out := flag.String("out", "_output/render", "directory to write one rendered file per scenario to")
	all := flag.Bool("all", false, "render the test scenarios too, not only the user examples")
	flag.Parse()
	if err := run(*out, *all); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func run(out string, all bool) error {
	tools, err := render.ToolsFromEnv()
	if err != nil {
		return err
	}
	bin := os.Getenv(render.EnvFunction)
	if bin == "" {
		return fmt.Errorf("%s must name the function binary", render.EnvFunction)
	}
	root, err := render.RepoRoot(".")
	if err != nil {
		return err
	}
	list := render.Examples
	if all {
		list = render.Scenarios
	}
	scenarios, err := list(root)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o750); err != nil {
		return fmt.Errorf("cannot create %s: %w", out, err)
	}
	logf, err := os.Create(filepath.Join(out, "function.log")) //nolint:gosec // Output path is the caller's choice.
	if err != nil {
		return err
	}
	defer logf.Close() //nolint:errcheck // Log file.

	fn, err := render.StartFunction(bin, logf)
	if err != nil {
		return err
	}
	defer fn.Stop() //nolint:errcheck // Reported below on the normal path.

	for _, sc := range scenarios {
		b, err := render.Render(context.Background(), tools, root, sc, fn.Address)
		if err != nil {
			return fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		dst := filepath.Join(out, sc.Name+".yaml")
		if err := os.WriteFile(dst, b, 0o600); err != nil { //nolint:gosec // The output directory is the caller's choice.
			return fmt.Errorf("cannot write %s: %w", dst, err)
		}
		fmt.Printf("# ---- %s (%s) -> %s\n%s", sc.Name, sc.Path, dst, b)
	}
	return fn.Stop()
}
