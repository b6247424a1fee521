// Command xrdgen reads controller-gen's CRD output on stdin and writes the
// XRDs and CRDs the packages ship, relative to the repository root given by
// --root.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/cozystack/function-tenant-gateway/apis/internal/xrdgen"
)

func main() {
	root := flag.String("root", ".", "repository root to write the generated files under")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "xrdgen:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		return fmt.Errorf("cannot read controller-gen output: %w", err)
	}
	files, err := xrdgen.Files(in)
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		dst := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
			return fmt.Errorf("cannot create directory for %s: %w", p, err)
		}
		if err := os.WriteFile(dst, files[p], 0o644); err != nil { //nolint:gosec // Generated manifests are world-readable by design.
			return fmt.Errorf("cannot write %s: %w", p, err)
		}
		fmt.Println("wrote", p)
	}
	return nil
}
