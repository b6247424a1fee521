package packages

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xpkg"
	apiextensionsv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	pkgmetav1 "github.com/crossplane/crossplane/apis/v2/pkg/meta/v1"
	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
)

// derivedName is the name Crossplane v2.4's dependency resolver gives a
// package it installs for a dependency on ref, and the name `crossplane
// xpkg install` gives one installed without a name: the reference's
// repository as a DNS label (internal/controller/pkg/resolver, NewPackage;
// the CLI's install command).
func derivedName(t *testing.T, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		t.Fatalf("cannot parse %q: %v", ref, err)
	}
	return xpkg.ToDNSLabel(r.Context().RepositoryStr())
}

// calledName is the one Function name every pipeline step of the shipped
// Compositions calls.
func calledName(t *testing.T) string {
	t.Helper()
	names := map[string][]string{}
	for _, path := range [][]string{{"configuration", "tenantgateway"}, {"configuration-tenant", "tenant"}} {
		c := &apiextensionsv1.Composition{}
		strict(t, repoFile(t, append(append([]string{"package"}, path...), "composition.yaml")...), c)
		if len(c.Spec.Pipeline) == 0 {
			t.Fatalf("Composition %s has no pipeline step", c.GetName())
		}
		for _, s := range c.Spec.Pipeline {
			names[s.FunctionRef.Name] = append(names[s.FunctionRef.Name], c.GetName()+"/"+s.Step)
		}
	}
	if len(names) != 1 {
		t.Fatalf("the Compositions' steps call more than one Function: %v", names)
	}
	for n := range names {
		return n
	}
	return ""
}

// TestCompositionsCallTheDependency: the Function the Configuration's
// dependency makes Crossplane install is the one every Composition step
// calls. Were they different, every TenantGateway and Tenant would fail with
// "cannot find an active FunctionRevision".
func TestCompositionsCallTheDependency(t *testing.T) {
	dep := dependency(t, pkgmetav1.FunctionKind)
	if got, want := derivedName(t, *dep.Package+":v0.1.0"), calledName(t); got != want {
		t.Errorf("Crossplane installs the Function dependency %s as %q, but the Compositions call %q", *dep.Package, got, want)
	}
}

// A mention is a Function name a text gives, where.
type mention struct {
	where, name string
}

var (
	// xpkgFunction starts a `crossplane xpkg install|update function`
	// command.
	xpkgFunction = regexp.MustCompile(`crossplane\s+xpkg\s+(?:install|update)\s+function\s`)
	// functionResource is kubectl naming a Function object:
	// function.pkg.crossplane.io/<name> or functions.pkg.crossplane.io <name>.
	functionResource = regexp.MustCompile(`functions?\.pkg\.crossplane\.io(?:/|[ \t]+)([a-z0-9][a-z0-9-]*)`)
	// functionRef is a Composition step's functionRef in a snippet.
	functionRef = regexp.MustCompile(`functionRef:\s*\{?\s*name:\s*([a-z0-9][a-z0-9-]*)`)
	// namedFunction is prose naming the installed Function: "named X", "as
	// X", "the Function X", for a name ending in the project's.
	namedFunction = regexp.MustCompile("\\b(?:named|as|[Ff]unction)\\s+`?([a-z0-9-]*function-tenant-gateway)\\b")
	// placeholder is a <version>-like placeholder in a reference.
	placeholder = regexp.MustCompile(`<[a-z-]+>`)
)

// commandArgs is the text of the command that starts at text[start:]: to
// the closing backtick when it sits in an inline code span, else to the end
// of its line (continued by a trailing backslash), without a # comment.
func commandArgs(text string, start int) string {
	rest := text[start:]
	var cmd string
	if start > 0 && text[start-1] == '`' {
		cmd, _, _ = strings.Cut(rest, "`")
	} else {
		var b strings.Builder
		for line := range strings.Lines(rest) {
			line = strings.TrimRight(line, "\n")
			more := strings.HasSuffix(line, "\\")
			b.WriteString(strings.TrimSuffix(line, "\\") + " ")
			if !more {
				break
			}
		}
		cmd = b.String()
	}
	cmd, _, _ = strings.Cut(cmd, "#")
	return cmd
}

// mentions finds the Function names text gives: the name of every `crossplane
// xpkg install|update function` of fnSource (given, or the one the CLI
// derives), every Function object kubectl names, functionRef snippets and
// prose naming it.
func mentions(t *testing.T, where, text, fnSource string) []mention {
	t.Helper()
	var out []mention
	line := func(i int) string { return fmt.Sprintf("%s:%d", where, strings.Count(text[:i], "\n")+1) }
	for _, loc := range xpkgFunction.FindAllStringIndex(text, -1) {
		var args []string
		for _, a := range strings.Fields(commandArgs(text, loc[0])[loc[1]-loc[0]:]) {
			if !strings.HasPrefix(a, "-") {
				args = append(args, a)
			}
		}
		if len(args) == 0 {
			t.Errorf("%s: a crossplane xpkg command names no package", line(loc[0]))
			continue
		}
		ref := placeholder.ReplaceAllString(args[0], "v0.1.0")
		r, err := name.ParseReference(ref, name.StrictValidation)
		if err != nil || r.Context().String() != fnSource {
			// Another package, or a placeholder for the whole reference.
			continue
		}
		n := derivedName(t, ref)
		if len(args) > 1 {
			n = args[1]
		}
		out = append(out, mention{line(loc[0]) + " (" + strings.Join(args, " ") + ")", n})
	}
	for _, re := range []*regexp.Regexp{functionResource, functionRef, namedFunction} {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			out = append(out, mention{line(m[0]) + " (" + text[m[0]:m[1]] + ")", text[m[2]:m[3]]})
		}
	}
	return out
}

// TestFunctionNamesInTexts: every Function name the packages' readmes and
// descriptions, the README and docs, and the examples give is the name the
// Compositions call. The Function package's readme once told operators to
// install it as function-tenant-gateway, a name no Composition calls.
func TestFunctionNamesInTexts(t *testing.T) {
	want := calledName(t)
	fnSource := *dependency(t, pkgmetav1.FunctionKind).Package

	fn := &pkgmetav1.Function{}
	strict(t, repoFile(t, "package", "function", "crossplane.yaml"), fn)
	texts := map[string]string{}
	for p, annotations := range map[string]map[string]string{"function": fn.GetAnnotations(), "configuration": configuration(t).GetAnnotations()} {
		for k, v := range annotations {
			texts["package/"+p+"/crossplane.yaml "+k] = v
		}
	}
	files := []string{"README.md"}
	for _, pattern := range []string{"docs/*.md", "examples/*.yaml", "examples/*/*.yaml", "examples/*/*/*.yaml", "examples/*/README.md", "test/render/scenarios/*/*.yaml"} {
		m, err := filepath.Glob(filepath.Join("..", pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			files = append(files, strings.TrimPrefix(filepath.ToSlash(f), "../"))
		}
	}
	for _, f := range files {
		texts[f] = string(repoFile(t, strings.Split(f, "/")...))
	}

	var got []mention
	for where, text := range texts {
		got = append(got, mentions(t, where, text, fnSource)...)
	}
	// Function objects in the examples (the render's functions.yaml).
	for _, f := range files {
		if !strings.HasSuffix(f, ".yaml") {
			continue
		}
		for _, doc := range documents(t, strings.Split(f, "/")...) {
			var kind struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := yaml.Unmarshal(doc, &kind); err != nil || kind.Kind != pkgv1.FunctionKind || !strings.HasPrefix(kind.APIVersion, pkgv1.Group+"/") {
				continue
			}
			fn := &pkgv1.Function{}
			strict(t, doc, fn)
			got = append(got, mention{f + " (Function " + fn.GetName() + ")", fn.GetName()})
			if src := derivedName(t, fn.Spec.Package); src != want {
				t.Errorf("%s: Function %s runs %s, not the Configuration's dependency %s", f, fn.GetName(), fn.Spec.Package, fnSource)
			}
		}
	}

	// Each kind of text must give the name somewhere, so that this test
	// cannot pass on finding nothing.
	for _, must := range []string{"package/function/crossplane.yaml meta.crossplane.io/readme", "package/configuration/crossplane.yaml meta.crossplane.io/readme", "README.md", "docs/install.md", "docs/operations.md", "examples/functions.yaml"} {
		if !slices.ContainsFunc(got, func(m mention) bool {
			return strings.HasPrefix(m.where, must+":") || strings.HasPrefix(m.where, must+" ")
		}) {
			t.Errorf("%s gives no Function name: the test finds nothing to check there", must)
		}
	}
	var wrong []string
	for _, m := range got {
		if m.name != want {
			wrong = append(wrong, fmt.Sprintf("%s: %q", m.where, m.name))
		}
	}
	slices.Sort(wrong)
	if diff := cmp.Diff([]string(nil), wrong); diff != "" {
		t.Errorf("Function names other than %q, the one the Compositions call (-want +got):\n%s", want, diff)
	}
}
