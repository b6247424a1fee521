package gateway

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-tenant-gateway/fn/tgwspec"
)

// sectionNameRE is the Gateway API SectionName pattern.
var sectionNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

func TestNames(t *testing.T) {
	type want struct {
		label, hex8, listener, certificate string
	}
	cases := map[string]struct {
		reason   string
		tgw      string
		hostname string
		want     want
	}{
		"HTTP01CheckValue": {
			reason:   "an http01 host: the label, then the first 8 hex digits of the SHA-256 of the hostname",
			tgw:      "cozystack",
			hostname: "harbor.foo.example.com",
			want:     want{label: "harbor", hex8: "760d5a8a", listener: "https-harbor-760d5a8a", certificate: "cozystack-harbor-760d5a8a-tls"},
		},
		"UppercaseIsLowered": {
			reason:   "Hostnames are case-insensitive, so they hash and name as lowercase",
			tgw:      "cozystack",
			hostname: "Harbor.Foo.Example.COM",
			want:     want{label: "harbor", hex8: "760d5a8a", listener: "https-harbor-760d5a8a", certificate: "cozystack-harbor-760d5a8a-tls"},
		},
		"SameLabelOtherHost": {
			reason:   "Two hosts sharing a first label get different names",
			tgw:      "cozystack",
			hostname: "harbor.alice.example.com",
			want: want{
				label: "harbor", hex8: Hex8("harbor.alice.example.com"),
				listener: "https-harbor-" + Hex8("harbor.alice.example.com"), certificate: "cozystack-harbor-" + Hex8("harbor.alice.example.com") + "-tls",
			},
		},
		"SingleLabel": {
			reason:   "A hostname without dots is its own label",
			tgw:      "gw",
			hostname: "localhost",
			want:     want{label: "localhost", hex8: Hex8("localhost"), listener: "https-localhost-" + Hex8("localhost"), certificate: "gw-localhost-" + Hex8("localhost") + "-tls"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := want{
				label:       Label(tc.hostname),
				hex8:        Hex8(tc.hostname),
				listener:    HostListenerName(tc.hostname),
				certificate: HostCertificateName(tc.tgw, tc.hostname),
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nnames(%q): -want, +got:\n%s", tc.reason, tc.hostname, diff)
			}
			if !sectionNameRE.MatchString(got.listener) {
				t.Errorf("listener name %q does not match the Gateway API SectionName pattern", got.listener)
			}
		})
	}
	if got := Hex8("harbor.alice.example.com"); got == "760d5a8a" {
		t.Errorf("Hex8 of a different host equals the check value %q", got)
	}
}

func TestObjectNames(t *testing.T) {
	got := map[string]string{
		"issuer":   IssuerName("cozystack"),
		"account":  AccountKeySecretName("cozystack"),
		"redirect": RedirectName("cozystack"),
	}
	want := map[string]string{
		"issuer":   "cozystack-gateway",
		"account":  "cozystack-acme-account",
		"redirect": "cozystack-http-redirect",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("object names: -want, +got:\n%s", diff)
	}
}

func FuzzHostKey(f *testing.F) {
	for _, s := range []string{"harbor.foo.example.com", "", ".", "a..b", "*.example.org", "ÄÖ.example", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		k := HostKey(h)
		if len(Hex8(h)) != 8 {
			t.Fatalf("Hex8(%q) = %q, want 8 hex digits", h, Hex8(h))
		}
		if HostKey(h) != k {
			t.Fatalf("HostKey(%q) is not deterministic", h)
		}
		// A valid hostname always yields a valid listener name, or the
		// listener would be refused by the Gateway API schema.
		if tgwspec.ValidateHostname(nil, h) == nil && len(HostListenerName(h)) <= 63 && !sectionNameRE.MatchString(HostListenerName(h)) {
			t.Fatalf("valid hostname %q gave listener name %q outside the SectionName pattern", h, HostListenerName(h))
		}
	})
}
