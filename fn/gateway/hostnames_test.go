package gateway

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHostnames(t *testing.T) {
	long := strings.Repeat("a", 62) + "." + strings.Repeat("b", 62) + "." + strings.Repeat("c", 62) + "." + strings.Repeat("d", 60) + ".org" // 253 characters
	type got struct{ Valid, Under, OneBelow bool }
	cases := map[string]struct {
		reason string
		h, d   string
		want   got
	}{
		"Exact":         {reason: "A name is under itself, not one label below", h: "example.org", d: "example.org", want: got{Valid: true, Under: true}},
		"OneBelow":      {reason: "One label below", h: "www.example.org", d: "example.org", want: got{Valid: true, Under: true, OneBelow: true}},
		"TwoBelow":      {reason: "Two labels below: under, but no wildcard certificate of the domain covers it", h: "a.b.example.org", d: "example.org", want: got{Valid: true, Under: true}},
		"Wildcard":      {reason: "A wildcard counts by its base", h: "*.example.org", d: "example.org", want: got{Valid: true, Under: true, OneBelow: true}},
		"SuffixNoDot":   {reason: "A name ending in the domain without a dot before it is not under it", h: "badexample.org", d: "example.org", want: got{Valid: true}},
		"Uppercase":     {reason: "Gateway API hostnames are lowercase", h: "WWW.example.org", d: "example.org", want: got{Under: true, OneBelow: true}},
		"AtTheLimit":    {reason: "253 characters are valid", h: long, d: "org", want: got{Valid: true, Under: true}},
		"OverTheLimit":  {reason: "254 characters are not", h: "a" + long, d: "org", want: got{Under: true}},
		"WildcardLimit": {reason: "The wildcard label counts toward 253 characters", h: "*." + long[2:], d: "org", want: got{Valid: true, Under: true}},
		"WildcardOver":  {reason: "A wildcard whose base is valid but 254 characters with the wildcard label is not", h: "*." + long[1:], d: "org", want: got{Under: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := got{Valid: validHostname(tc.h), Under: under(tc.h, tc.d), OneBelow: oneLabelBelow(tc.h, tc.d)}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("%s\n%s in %s: -want, +got:\n%s", tc.reason, tc.h, tc.d, diff)
			}
		})
	}
}

func TestDomainsAbove(t *testing.T) {
	var seen []string
	eachDomain("a.b.example.org", func(d string) bool {
		seen = append(seen, d)
		return false
	})
	if diff := cmp.Diff([]string{"a.b.example.org", "b.example.org", "example.org", "org"}, seen); diff != "" {
		t.Errorf("eachDomain: every domain, longest first: -want, +got:\n%s", diff)
	}
	seen = nil
	eachDomain("a.b.example.org", func(d string) bool {
		seen = append(seen, d)
		return d == "b.example.org"
	})
	if diff := cmp.Diff([]string{"a.b.example.org", "b.example.org"}, seen); diff != "" {
		t.Errorf("eachDomain: stops where f returns true: -want, +got:\n%s", diff)
	}
	for h, want := range map[string]string{"a.b": "b", "b": ""} {
		if got := parent(h); got != want {
			t.Errorf("parent(%q) = %q, want %q", h, got, want)
		}
	}
}
