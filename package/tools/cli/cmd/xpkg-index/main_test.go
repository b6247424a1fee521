package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// elfHeader is the 64-byte header of a little-endian ELF64 linux executable
// for machine m, with no sections: all binarch reads.
func elfHeader(m elf.Machine) []byte {
	b := make([]byte, 64)
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	b[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	b[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	le := binary.LittleEndian
	le.PutUint16(b[16:], uint16(elf.ET_EXEC))
	le.PutUint16(b[18:], uint16(m))
	le.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	le.PutUint16(b[52:], 64) // e_ehsize
	le.PutUint16(b[54:], 56) // e_phentsize
	le.PutUint16(b[58:], 64) // e_shentsize
	return b
}

func tarLayer(t *testing.T, file string, content []byte) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: file, Mode: 0o755, Size: int64(len(content))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return static.NewLayer(buf.Bytes(), types.DockerLayer)
}

// pkgImage is a Function package the way xpkg build and push leave it: the
// runtime layer with /function built for bin, the annotated package layer,
// and an image config saying linux/arch.
func pkgImage(t *testing.T, arch string, bin elf.Machine) v1.Image {
	t.Helper()
	img, err := mutate.Append(empty.Image,
		mutate.Addendum{Layer: tarLayer(t, "function", elfHeader(bin))},
		mutate.Addendum{Layer: tarLayer(t, "package.yaml", []byte("kind: Function\n")), Annotations: map[string]string{xpkgAnnotation: xpkgBase}},
	)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// index is what xpkg push -f writes: each image by digest, the platform
// copied from its config.
func index(t *testing.T, imgs ...v1.Image) v1.ImageIndex {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		mt, err := img.MediaType()
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{MediaType: mt, Platform: &v1.Platform{OS: cf.OS, Architecture: cf.Architecture}}})
	}
	return mutate.AppendManifests(empty.Index, adds...)
}

func TestCheck(t *testing.T) {
	// The runtime layer alone (no package layer), to check that is refused.
	bare, err := mutate.AppendLayers(empty.Image, tarLayer(t, "function", elfHeader(elf.EM_X86_64)))
	if err != nil {
		t.Fatal(err)
	}
	bareCf, err := bare.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	bareCf = bareCf.DeepCopy()
	bareCf.OS, bareCf.Architecture = "linux", "amd64"
	if bare, err = mutate.ConfigFile(bare, bareCf); err != nil {
		t.Fatal(err)
	}
	amd64 := pkgImage(t, "amd64", elf.EM_X86_64)
	arm64 := pkgImage(t, "arm64", elf.EM_AARCH64)
	cases := map[string]struct {
		push    func(name.Tag) error
		wantErr string // empty: the check passes
	}{
		"TwoPlatforms": {push: func(r name.Tag) error { return remote.WriteIndex(r, index(t, amd64, arm64)) }},
		"SingleImage": {
			push:    func(r name.Tag) error { return remote.Write(r, amd64) },
			wantErr: "not an index",
		},
		"MissingPlatform": {
			push:    func(r name.Tag) error { return remote.WriteIndex(r, index(t, amd64)) },
			wantErr: "want [linux/amd64 linux/arm64]",
		},
		"DuplicatePlatform": {
			push: func(r name.Tag) error {
				return remote.WriteIndex(r, index(t, amd64, pkgImage(t, "amd64", elf.EM_X86_64), arm64))
			},
			wantErr: "two manifests for linux/amd64",
		},
		"WrongBinary": {
			push: func(r name.Tag) error {
				return remote.WriteIndex(r, index(t, amd64, pkgImage(t, "arm64", elf.EM_X86_64)))
			},
			wantErr: "/function is a linux/amd64 binary",
		},
		"NoPlatform": {
			push:    func(r name.Tag) error { return remote.WriteIndex(r, index(t, amd64, pkgImage(t, "", elf.EM_AARCH64))) },
			wantErr: "has no platform",
		},
		"NoPackageLayer": {
			push:    func(r name.Tag) error { return remote.WriteIndex(r, index(t, bare, arm64)) },
			wantErr: "0 layers annotated io.crossplane.xpkg=base",
		},
	}
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for n, tc := range cases {
		t.Run(n, func(t *testing.T) {
			ref, err := name.NewTag(host + "/cozystack/function-tenant-gateway:" + strings.ToLower(n))
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.push(ref); err != nil {
				t.Fatalf("push: %v", err)
			}
			lines, err := check(ref, []string{"linux/arm64", "linux/amd64"})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("check: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("check passed, want an error containing %q:\n%s", tc.wantErr, strings.Join(lines, "\n"))
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("check: %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}
