// Command runtime-image writes the function's runtime image as a docker-save
// tarball, without a Docker daemon or a registry: one layer holding the static
// function binary at /function on an empty base. `crossplane xpkg build
// --embed-runtime-image-tarball` embeds it in the Function package.
//
// The output is reproducible: file modes, owners and times in the layer and
// the image's creation time are fixed, so the same binary gives the same
// digest.
//
// The image config's architecture is what `crossplane xpkg push -f a,b`
// copies into each entry of a multi-platform index, and what a node's
// runtime picks by, so it is read from the binary's ELF header rather than
// trusted to a flag: --arch, when given, must agree with it.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/cozystack/function-tenant-gateway/package/tools/cli/internal/binarch"
)

func main() {
	bin := flag.String("binary", "", "static function binary to put at /function")
	out := flag.String("out", "", "docker-save tarball to write")
	tag := flag.String("tag", "", "image reference recorded in the tarball")
	arch := flag.String("arch", "", "expected image architecture (GOARCH); the binary's ELF header decides, this only checks it")
	port := flag.String("port", "9443/tcp", "gRPC port the function serves")
	flag.Parse()
	if *bin == "" || *out == "" || *tag == "" {
		fmt.Fprintln(os.Stderr, "usage: runtime-image --binary=PATH --out=PATH --tag=REF [--arch=GOARCH]")
		os.Exit(2)
	}
	if err := run(*bin, *out, *tag, *arch, *port); err != nil {
		fmt.Fprintln(os.Stderr, "runtime-image:", err)
		os.Exit(1)
	}
}

func run(bin, out, tag, want, port string) error {
	arch, err := binaryArch(bin)
	if err != nil {
		return err
	}
	if want != "" && want != arch {
		return fmt.Errorf("%s is a linux/%s binary, not linux/%s", bin, arch, want)
	}
	layer, err := binaryLayer(bin)
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return fmt.Errorf("cannot add the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("cannot read the image config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS = "linux"
	cf.Architecture = arch
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config.Entrypoint = []string{"/function"}
	cf.Config.ExposedPorts = map[string]struct{}{port: {}}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return fmt.Errorf("cannot set the image config: %w", err)
	}
	ref, err := name.ParseReference(tag)
	if err != nil {
		return fmt.Errorf("cannot parse tag %q: %w", tag, err)
	}
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return fmt.Errorf("cannot write %s: %w", out, err)
	}
	d, err := img.Digest()
	if err != nil {
		return fmt.Errorf("cannot compute the image digest: %w", err)
	}
	fmt.Printf("wrote %s (%s, linux/%s, image %s)\n", out, tag, arch, d)
	return nil
}

// binaryLayer is an uncompressed tar holding the binary as /function, with
// fixed metadata so the layer digest depends on the binary alone.
func binaryLayer(bin string) (v1.Layer, error) {
	f, err := os.Open(bin) //nolint:gosec // The caller names the binary.
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", bin, err)
	}
	defer f.Close() //nolint:errcheck // Read-only.
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot stat %s: %w", bin, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{
		Name:    "function",
		Mode:    0o755,
		Size:    fi.Size(),
		ModTime: time.Unix(0, 0).UTC(),
		Format:  tar.FormatPAX,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("cannot write the layer's tar header: %w", err)
	}
	if _, err := io.Copy(tw, f); err != nil {
		return nil, fmt.Errorf("cannot copy %s into the layer: %w", bin, err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("cannot finish the layer's tar: %w", err)
	}
	b := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		return nil, fmt.Errorf("cannot make a layer of %s: %w", bin, err)
	}
	return l, nil
}

// binaryArch is the OCI architecture of a static linux binary.
func binaryArch(bin string) (string, error) {
	f, err := os.Open(bin) //nolint:gosec // The caller names the binary.
	if err != nil {
		return "", fmt.Errorf("cannot open %s: %w", bin, err)
	}
	defer f.Close() //nolint:errcheck // Read-only.
	arch, err := binarch.Of(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", bin, err)
	}
	return arch, nil
}
