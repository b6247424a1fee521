// Package docs checks the documentation against its limits and against the
// code: the README's length and first screen, the size of docs/, that dates,
// loads and work history stay in benchmarks.md, and that operations.md's
// table of conditions and reasons names every reason the code sets.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Limits a reader can hold: a README read in one sitting and
// a documentation set read per reader.
const (
	maxReadmeLines = 250
	maxDocsBytes   = 150_000
	firstScreen    = 60
)

func read(t *testing.T, elem ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{".."}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docs lists the Markdown files of docs/.
func docs(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(m) == 0 {
		t.Fatal("no docs/*.md found")
	}
	return m
}

// TestReadme: at most 250 lines, and the pitch, a Tenant and the two
// commands within the first 60.
func TestReadme(t *testing.T) {
	readme := read(t, "README.md")
	lines := strings.Split(strings.TrimRight(readme, "\n"), "\n")
	if len(lines) > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move detail to docs/", len(lines), maxReadmeLines)
	}
	head := strings.Join(lines[:min(firstScreen, len(lines))], "\n")
	for _, want := range []string{"kind: Tenant", "make render", "make test"} {
		if !strings.Contains(head, want) {
			t.Errorf("README.md's first %d lines lack %q", firstScreen, want)
		}
	}
}

// TestDocsSize: every Markdown file of docs/ together within maxDocsBytes.
func TestDocsSize(t *testing.T) {
	total := 0
	var sizes []string
	for _, f := range docs(t) {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		total += int(fi.Size())
		sizes = append(sizes, f+" "+strconv.FormatInt(fi.Size(), 10))
	}
	if total > maxDocsBytes {
		t.Errorf("docs/*.md hold %d bytes, more than %d: %s", total, maxDocsBytes, strings.Join(sizes, ", "))
	}
}

// history is what belongs in git history and benchmarks.md only.
var history = []struct {
	what string
	re   *regexp.Regexp
}{
	{"a date", regexp.MustCompile(`\b20\d\d-[01]\d-[0-3]\d\b`)},
	{"a load average", regexp.MustCompile(`(?i)\bload(?: average)? (?:of |about |near )?\d`)},
	{"an issue number", regexp.MustCompile(`(?i)\bissues? #?\d+|(?:^|[\s(])#\d+\b`)},
	{"a numbered work period", regexp.MustCompile(`(?i)\bsession \d+|\brun \d+ of\b`)},
	{"the seed", regexp.MustCompile(`(?i)\bseeds?\b`)},
	{"SPEC", regexp.MustCompile(`\bSPEC\b`)},
	{"the authors' notes", regexp.MustCompile(`(?i)authors' notes|shared notes`)},
	{"a commit hash", regexp.MustCompile(`(?i)\b(?:commit|at) [0-9a-f]{7,40}\b`)},
}

// TestNoHistoryOutsideBenchmarks: dates, loads, runs, issue numbers and the
// authors' words appear in docs/benchmarks.md only.
func TestNoHistoryOutsideBenchmarks(t *testing.T) {
	files := map[string]string{"README.md": read(t, "README.md")}
	for _, f := range docs(t) {
		if f == "benchmarks.md" {
			continue
		}
		files["docs/"+f] = read(t, "docs", f)
	}
	for name, text := range files {
		for i, line := range strings.Split(text, "\n") {
			for _, h := range history {
				if m := h.re.FindString(line); m != "" {
					t.Errorf("%s:%d: %s (%q) belongs in docs/benchmarks.md or git history", name, i+1, h.what, m)
				}
			}
		}
	}
}

// reasonTypes are the types whose constants are reasons or states the code
// writes into a status, by name or, where the name alone says little, by
// package and name.
var reasonTypes = map[string]bool{
	"ConditionType": true, "ConditionReason": true, "ListenerReason": true,
	"HostnameState": true, "ChildApexState": true,
	"conditions.Type": true, "conditions.Reason": true,
}

// external resolves the constants of other modules the reason constants are
// converted from; a new one fails the test until it is added here.
var external = map[string]string{
	"gwapiv1.RouteReasonNoMatchingParent": string(gwapiv1.RouteReasonNoMatchingParent),
	"gwapiv1.RouteReasonAccepted":         string(gwapiv1.RouteReasonAccepted),
	"gwapiv1.ListenerReasonPending":       string(gwapiv1.ListenerReasonPending),
}

type constant struct {
	pkg, name string
	typ       string
	expr      ast.Expr
}

// reasonConstants parses the packages that set conditions and states and
// returns every constant of a reason type, by value.
func reasonConstants(t *testing.T) map[string][]string {
	t.Helper()
	dirs := map[string]string{
		"conditions": "../fn/conditions",
		"gateway":    "../fn/gateway",
		"tenant":     "../fn/tenant",
		"v1alpha1":   "../apis/gateway/v1alpha1",
	}
	consts := map[string]constant{} // "pkg.Name"
	fset := token.NewFileSet()
	for pkg, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(filepath.Base(f), "zz_generated") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range file.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, spec := range g.Specs {
					v := spec.(*ast.ValueSpec)
					typ := ""
					if id, ok := v.Type.(*ast.Ident); ok {
						typ = id.Name
					}
					for i, n := range v.Names {
						var e ast.Expr
						if i < len(v.Values) {
							e = v.Values[i]
						}
						if typ == "" && e != nil {
							if c, ok := e.(*ast.CallExpr); ok && len(c.Args) == 1 {
								if id, ok := c.Fun.(*ast.Ident); ok {
									typ = id.Name
								}
							}
						}
						consts[pkg+"."+n.Name] = constant{pkg: pkg, name: n.Name, typ: typ, expr: e}
					}
				}
			}
		}
	}
	var value func(pkg string, e ast.Expr) string
	value = func(pkg string, e ast.Expr) string {
		switch e := e.(type) {
		case *ast.BasicLit:
			s, err := strconv.Unquote(e.Value)
			if err != nil {
				t.Fatalf("%s: %v", e.Value, err)
			}
			return s
		case *ast.CallExpr:
			return value(pkg, e.Args[0])
		case *ast.Ident:
			c, ok := consts[pkg+"."+e.Name]
			if !ok {
				t.Fatalf("cannot resolve %s.%s", pkg, e.Name)
			}
			return value(pkg, c.expr)
		case *ast.SelectorExpr:
			x := e.X.(*ast.Ident).Name + "." + e.Sel.Name
			if v, ok := external[x]; ok {
				return v
			}
			if c, ok := consts[x]; ok {
				return value(c.pkg, c.expr)
			}
			t.Fatalf("cannot resolve %s: add it to external", x)
		}
		t.Fatalf("cannot resolve a constant of %T", e)
		return ""
	}
	out := map[string][]string{}
	for k, c := range consts {
		if !reasonTypes[c.typ] && !reasonTypes[c.pkg+"."+c.typ] || c.expr == nil {
			continue
		}
		v := value(c.pkg, c.expr)
		out[v] = append(out[v], k)
	}
	if len(out) < 20 {
		t.Fatalf("found only %d reason values: the parser misses them", len(out))
	}
	return out
}

// TestReasonsInOperations: every condition type, reason and state the code
// sets is in operations.md's "Conditions and reasons".
func TestReasonsInOperations(t *testing.T) {
	ops := read(t, "docs", "operations.md")
	_, section, ok := strings.Cut(ops, "\n## Conditions and reasons\n")
	if !ok {
		t.Fatal(`docs/operations.md has no "## Conditions and reasons" section`)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	var missing []string
	for v, names := range reasonConstants(t) {
		if !strings.Contains(section, "`"+v+"`") {
			slices.Sort(names)
			missing = append(missing, v+" ("+strings.Join(names, ", ")+")")
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("docs/operations.md, Conditions and reasons, does not explain %s", m)
	}
}
