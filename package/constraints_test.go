package packages

import (
	"regexp"
	"testing"

	"github.com/Masterminds/semver/v3"

	pkgmetav1 "github.com/crossplane/crossplane/apis/v2/pkg/meta/v1"
)

// versionIn finds the version a file pins with re's first group.
func versionIn(t *testing.T, re *regexp.Regexp, elem ...string) string {
	t.Helper()
	m := re.FindSubmatch(repoFile(t, elem...))
	if m == nil {
		t.Fatalf("%v pins no version matching %s", elem, re)
	}
	return string(m[1])
}

// TestDependencyConstraints: the versions the Configuration's dependencies
// admit, judged by the semver library Crossplane v2.4's dependency resolver
// uses. The Function's constraint admits the version the render examples
// run and its patch releases, never the next minor release: Crossplane
// installs the newest version a constraint allows, so an unbounded
// constraint would give a fresh install of an old Configuration whatever
// Function was released last. provider-kubernetes' admits the version the
// end-to-end tests run and no next major.
func TestDependencyConstraints(t *testing.T) {
	fnVersion := versionIn(t, regexp.MustCompile(`package: ghcr\.io/cozystack/function-tenant-gateway:(v[0-9.]+)`), "examples", "functions.yaml")
	providerVersion := versionIn(t, regexp.MustCompile(`github\.com/crossplane-contrib/provider-kubernetes (v[0-9.]+)`), "test", "e2e", "tools", "provider-kubernetes", "go.mod")
	next := func(v string, minor bool) string {
		s := semver.MustParse(v)
		if minor {
			return "v" + s.IncMinor().String()
		}
		return "v" + s.IncMajor().String()
	}
	patch := func(v string) string { s := semver.MustParse(v); return "v" + s.IncPatch().IncPatch().String() }
	cases := map[string]struct {
		kind    string
		version string
		want    bool
	}{
		"FunctionRendered":        {pkgmetav1.FunctionKind, fnVersion, true},
		"FunctionPatch":           {pkgmetav1.FunctionKind, patch(fnVersion), true},
		"FunctionNextMinor":       {pkgmetav1.FunctionKind, next(fnVersion, true), false},
		"FunctionNextMajor":       {pkgmetav1.FunctionKind, next(fnVersion, false), false},
		"FunctionOlder":           {pkgmetav1.FunctionKind, "v0.0.9", false},
		"ProviderTested":          {pkgmetav1.ProviderKind, providerVersion, true},
		"ProviderNextMajor":       {pkgmetav1.ProviderKind, next(providerVersion, false), false},
		"ProviderOlderThanTested": {pkgmetav1.ProviderKind, "v1.2.0", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dep := dependency(t, tc.kind)
			c, err := semver.NewConstraint(dep.Version)
			if err != nil {
				t.Fatalf("%s dependency %s: constraint %q does not parse: %v", tc.kind, *dep.Package, dep.Version, err)
			}
			if got := c.Check(semver.MustParse(tc.version)); got != tc.want {
				t.Errorf("%s dependency %s, constraint %q admits %s: %v, want %v", tc.kind, *dep.Package, dep.Version, tc.version, got, tc.want)
			}
		})
	}
}
