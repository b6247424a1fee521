// Command xpkg-index checks a multi-platform Function package as a registry
// serves it: the tag must be an OCI image index with exactly one manifest
// per expected platform, each manifest's image config must name the same
// platform as its index entry, each image must carry the package layer
// Crossplane reads, and the /function binary in each image must be built for
// that entry's architecture.
//
// `crossplane xpkg push -f amd64.xpkg,arm64.xpkg REF` writes the index
// entries from each image config's os and architecture and checks nothing
// else, so a package built around the wrong binary would be published under
// the wrong platform without complaint, and nodes of the other architecture
// would pull a binary they cannot run. The end-to-end harness runs this
// right after its push.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/cozystack/function-tenant-gateway/package/tools/cli/internal/binarch"
)

// The layer annotation `crossplane xpkg push` gives the layer holding
// package.yaml, the one Crossplane's package manager reads (crossplane-runtime
// pkg/xpkg AnnotationKey and PackageAnnotation).
const (
	xpkgAnnotation = "io.crossplane.xpkg"
	xpkgBase       = "base"
)

// maxBinary bounds how much of /function is read into memory: the function
// is about 40 MiB, and a registry serving something much bigger is wrong.
const maxBinary = 512 << 20

func main() {
	ref := flag.String("ref", "", "the package's tag in a registry, REGISTRY/REPOSITORY:TAG")
	platforms := flag.String("platforms", "linux/amd64,linux/arm64", "the platforms the index must hold, exactly")
	flag.Parse()
	if *ref == "" {
		fmt.Fprintln(os.Stderr, "usage: xpkg-index --ref=REGISTRY/REPOSITORY:TAG [--platforms=linux/amd64,linux/arm64]")
		os.Exit(2)
	}
	r, err := name.ParseReference(*ref, name.StrictValidation)
	if err != nil {
		fmt.Fprintf(os.Stderr, "xpkg-index: cannot parse --ref %q: %v\n", *ref, err)
		os.Exit(2)
	}
	lines, err := check(r, strings.Split(*platforms, ","))
	if err != nil {
		fmt.Fprintf(os.Stderr, "xpkg-index: %s: %v\n", r, err)
		os.Exit(1)
	}
	fmt.Println(strings.Join(lines, "\n"))
}

// check returns one line per platform describing what it found, or the first
// thing that is wrong. It talks plain HTTP to loopback registries, as
// go-containerregistry does for them by default.
func check(ref name.Reference, want []string, opts ...remote.Option) ([]string, error) {
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return nil, fmt.Errorf("cannot fetch: %w", err)
	}
	if !desc.MediaType.IsIndex() {
		return nil, fmt.Errorf("is a single image (%s), not an index: push every architecture at once, xpkg push -f a.xpkg,b.xpkg", desc.MediaType)
	}
	idx, err := desc.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("cannot read the index: %w", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("cannot read the index manifest: %w", err)
	}
	var got []string
	lines := []string{fmt.Sprintf("%s: index %s, %d manifests", ref, desc.Digest, len(im.Manifests))}
	for _, m := range im.Manifests {
		p, err := platform(m)
		if err != nil {
			return nil, err
		}
		if slices.Contains(got, p) {
			return nil, fmt.Errorf("two manifests for %s", p)
		}
		got = append(got, p)
		img, err := idx.Image(m.Digest)
		if err != nil {
			return nil, fmt.Errorf("cannot read the %s image %s: %w", p, m.Digest, err)
		}
		line, err := checkImage(img, *m.Platform)
		if err != nil {
			return nil, fmt.Errorf("%s image %s: %w", p, m.Digest, err)
		}
		lines = append(lines, fmt.Sprintf("  %s %s: %s", p, m.Digest, line))
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		return nil, fmt.Errorf("holds platforms %v, want %v", got, want)
	}
	return lines, nil
}

// platform is an index entry's platform as os/arch[/variant].
func platform(m v1.Descriptor) (string, error) {
	// A package without a runtime image (a Configuration) has no
	// architecture in its config, and push files it under none.
	if m.Platform == nil || m.Platform.OS == "" || m.Platform.Architecture == "" {
		return "", fmt.Errorf("manifest %s has no platform", m.Digest)
	}
	p := m.Platform.OS + "/" + m.Platform.Architecture
	if m.Platform.Variant != "" {
		p += "/" + m.Platform.Variant
	}
	return p, nil
}

// checkImage checks one platform's image against its index entry.
func checkImage(img v1.Image, p v1.Platform) (string, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return "", fmt.Errorf("cannot read the image config: %w", err)
	}
	if cf.OS != p.OS || cf.Architecture != p.Architecture {
		return "", fmt.Errorf("the image config says %s/%s", cf.OS, cf.Architecture)
	}
	mf, err := img.Manifest()
	if err != nil {
		return "", fmt.Errorf("cannot read the image manifest: %w", err)
	}
	base := 0
	for _, l := range mf.Layers {
		if l.Annotations[xpkgAnnotation] == xpkgBase {
			base++
		}
	}
	if base != 1 {
		return "", fmt.Errorf("%d layers annotated %s=%s, want 1 (the package layer Crossplane reads)", base, xpkgAnnotation, xpkgBase)
	}
	arch, err := functionArch(img)
	if err != nil {
		return "", err
	}
	if arch != p.Architecture {
		return "", fmt.Errorf("/function is a linux/%s binary", arch)
	}
	return fmt.Sprintf("config %s/%s, package layer, /function linux/%s", cf.OS, cf.Architecture, arch), nil
}

// functionArch is the architecture of /function as the image's filesystem
// has it: the last layer that writes the path wins.
func functionArch(img v1.Image) (string, error) {
	layers, err := img.Layers()
	if err != nil {
		return "", fmt.Errorf("cannot list the layers: %w", err)
	}
	var bin []byte
	for _, l := range layers {
		b, err := fileInLayer(l, "function")
		if err != nil {
			return "", err
		}
		if b != nil {
			bin = b
		}
	}
	if bin == nil {
		return "", errors.New("no layer holds /function")
	}
	arch, err := binarch.Of(bytes.NewReader(bin))
	if err != nil {
		return "", fmt.Errorf("/function: %w", err)
	}
	return arch, nil
}

// fileInLayer returns the content of the file at the root-relative path want
// in layer l, or nil when the layer does not hold it.
func fileInLayer(l v1.Layer, want string) ([]byte, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, fmt.Errorf("cannot read a layer: %w", err)
	}
	defer rc.Close() //nolint:errcheck // Read-only.
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read a layer's tar: %w", err)
		}
		if path.Clean("/"+h.Name) != "/"+want || h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, maxBinary+1))
		if err != nil {
			return nil, fmt.Errorf("cannot read /%s: %w", want, err)
		}
		if len(b) > maxBinary {
			return nil, fmt.Errorf("/%s is larger than %d bytes", want, maxBinary)
		}
		return b, nil
	}
}
