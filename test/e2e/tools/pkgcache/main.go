// Command pkgcache writes a Crossplane package.yaml into Crossplane's package
// cache under the key Crossplane computes for a digest-pinned reference, so
// that a Function whose spec.package is that reference (and whose pull
// policy is Never) installs without any registry. It prints the reference.
package main

import (
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xpkg"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: pkgcache CACHE_DIR REPOSITORY PACKAGE_YAML")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "pkgcache:", err)
		os.Exit(1)
	}
}

func run(dir, repo, file string) error {
	b, err := os.ReadFile(file) //nolint:gosec // The caller names the package file.
	if err != nil {
		return err
	}
	digest := fmt.Sprintf("sha256:%x", sha256.Sum256(b))
	ref, err := name.ParseReference(repo + "@" + digest)
	if err != nil {
		return fmt.Errorf("cannot parse %s: %w", repo, err)
	}
	key := xpkg.FriendlyID(xpkg.ParsePackageSourceFromReference(ref), digest)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	f, err := os.Create(filepath.Clean(xpkg.BuildPath(dir, key, ".gz")))
	if err != nil {
		return err
	}
	w := gzip.NewWriter(f)
	if _, err := w.Write(b); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Println(ref.String())
	return nil
}
