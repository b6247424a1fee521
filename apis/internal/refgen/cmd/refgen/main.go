// Command refgen writes docs/reference.md from the generated XRDs and CRD,
// the platform settings and the function's flags, relative to the
// repository root given by --root. `make generate` runs it after xrdgen, so
// the reference reads the XRDs just written.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cozystack/function-tenant-gateway/apis/internal/refgen"
)

func main() {
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "refgen:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	b, err := refgen.Generate(root)
	if err != nil {
		return err
	}
	dst := filepath.Join(root, refgen.Path)
	if err := os.WriteFile(dst, b, 0o644); err != nil { //nolint:gosec // Documentation is world-readable by design.
		return fmt.Errorf("cannot write %s: %w", refgen.Path, err)
	}
	fmt.Println("wrote", refgen.Path)
	return nil
}
