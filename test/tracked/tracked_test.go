// Package tracked checks what the repository holds: every file git tracks,
// or would add (untracked and not ignored), is text and small. A build
// output committed by accident is a binary tens of megabytes large that every
// clone carries forever; builds go to _output/, which .gitignore names.
package tracked

import (
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

const (
	// maxSize bounds any file. The largest files are generated goldens and
	// go.sum files, an order of magnitude below it; a file over it is data
	// or a build output, which belongs elsewhere.
	maxSize = 1 << 20
	// maxImageSize bounds the one kind of binary file allowed: a PNG under
	// docs/, which the documentation shows and which no text format renders
	// on a forge (docs/scale.png, drawn by TestScale from the text records in
	// docs/scale/). A plot of that kind is a few kilobytes.
	maxImageSize = 256 << 10
)

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// problem says why a file must not be in the repository, or "" when it may.
// A file is binary when it holds a NUL byte or is not UTF-8, as git and
// diff tools judge it.
func problem(name string, content []byte) string {
	if isImage(name, content) {
		if len(content) > maxImageSize {
			return "an image over 256 KiB"
		}
		return ""
	}
	switch {
	case len(content) > maxSize:
		return "over 1 MiB"
	case bytes.IndexByte(content, 0) >= 0 || !utf8.Valid(content):
		return "binary"
	}
	return ""
}

// isImage reports a PNG under docs/: by its name and by its content, so a
// binary renamed .png is still a binary.
func isImage(name string, content []byte) bool {
	return strings.HasPrefix(name, "docs/") && path.Ext(name) == ".png" && bytes.HasPrefix(content, pngSignature)
}

func TestProblem(t *testing.T) {
	png := append(append([]byte{}, pngSignature...), 0, 1, 2)
	cases := map[string]struct {
		reason  string
		name    string
		content []byte
		want    string
	}{
		"Text":         {reason: "source and documentation are text", name: "fn/function.go", content: []byte("package fn\n"), want: ""},
		"UTF8":         {reason: "UTF-8 beyond ASCII is text", name: "docs/design.md", content: []byte("http → https\n"), want: ""},
		"Empty":        {reason: "an empty file is text", name: "fn/.keep", content: nil, want: ""},
		"ELF":          {reason: "a build output committed by accident", name: "function", content: []byte("\x7fELF\x02\x01\x01\x00"), want: "binary"},
		"NotUTF8":      {reason: "bytes no text encoding gives", name: "data.txt", content: []byte{0xff, 0xfe, 'a'}, want: "binary"},
		"Large":        {reason: "a text file over the bound", name: "examples/big/expected.yaml", content: bytes.Repeat([]byte("a"), maxSize+1), want: "over 1 MiB"},
		"AtBound":      {reason: "the bound itself is allowed", name: "examples/big/expected.yaml", content: bytes.Repeat([]byte("a"), maxSize), want: ""},
		"DocsPNG":      {reason: "a plot the documentation shows", name: "docs/scale.png", content: png, want: ""},
		"LargePNG":     {reason: "an image beyond a plot's size", name: "docs/scale.png", content: append(append([]byte{}, png...), make([]byte, maxImageSize)...), want: "an image over 256 KiB"},
		"PNGElsewhere": {reason: "images belong to the documentation only", name: "test/testdata/plot.png", content: png, want: "binary"},
		"FakePNG":      {reason: "a binary named .png is still a binary", name: "docs/function.png", content: []byte("\x7fELF\x02\x01\x01\x00"), want: "binary"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, problem(tc.name, tc.content)); diff != "" {
				t.Errorf("%s\nproblem(%q): -want, +got:\n%s", tc.reason, tc.name, diff)
			}
		})
	}
}

// TestRepositoryFiles checks every file git tracks or would add, so a stray
// binary fails `make test` before it is committed, not after.
func TestRepositoryFiles(t *testing.T) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		// A source tarball has no .git and nothing it could commit.
		t.Skipf("not in a git work tree: %v", err)
	}
	root := strings.TrimSpace(string(top))
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("cannot list the repository's files: %v", err)
	}
	names := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(names) < 100 {
		t.Fatalf("git lists %d files, fewer than the repository holds: %q", len(names), names)
	}
	for _, name := range names {
		content, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if os.IsNotExist(err) {
			continue // deleted in the work tree: nothing to commit
		}
		if err != nil {
			t.Errorf("cannot read %s: %v", name, err)
			continue
		}
		if p := problem(name, content); p != "" {
			t.Errorf("%s is %s (%d bytes): keep build outputs in _output/ and data out of the repository", name, p, len(content))
		}
	}
}
