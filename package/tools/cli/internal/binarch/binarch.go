// Package binarch tells the OCI architecture of a static linux binary from
// its ELF header, so that what an image or an index entry claims to be can be
// checked against what it actually runs on.
package binarch

import (
	"debug/elf"
	"fmt"
	"io"
)

// machines maps the ELF machines we publish the function for to their OCI
// architecture names, which are GOARCH values.
var machines = map[elf.Machine]string{
	elf.EM_X86_64:  "amd64",
	elf.EM_AARCH64: "arm64",
}

// Of returns the OCI architecture of the linux ELF binary r.
func Of(r io.ReaderAt) (string, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return "", fmt.Errorf("not an ELF binary: %w", err)
	}
	// ELF OS ABI 0 (System V) is what the Go linker writes for linux.
	if f.OSABI != elf.ELFOSABI_NONE && f.OSABI != elf.ELFOSABI_LINUX {
		return "", fmt.Errorf("not a linux binary (ELF OS ABI %s)", f.OSABI)
	}
	arch, ok := machines[f.Machine]
	if !ok {
		return "", fmt.Errorf("built for ELF machine %s, which we do not publish", f.Machine)
	}
	return arch, nil
}
