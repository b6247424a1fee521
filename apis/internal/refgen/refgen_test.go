package refgen

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-tenant-gateway/fn/tenant"
)

// TestSettingsAreRead: every platform setting the reference lists is read
// by the function. Each setting is set, alone, to a value of no type the
// function takes (a number where it reads a string, list, map or bool), and
// the function must refuse it naming the setting: a setting it did not read
// would pass unnoticed, and the reference would list a setting that does
// nothing. publishing.certificates.dns01 is read only when it is a map, so
// it gets a map with a provider of the wrong type.
func TestSettingsAreRead(t *testing.T) {
	probes := map[string]any{"publishing.certificates.dns01": map[string]any{"provider": 7}}
	for _, s := range Settings {
		t.Run(s.Path, func(t *testing.T) {
			keys := strings.Split(s.Path, ".")
			data := map[string]any{}
			m := data
			for _, k := range keys[:len(keys)-1] {
				next := map[string]any{}
				m[k] = next
				m = next
			}
			var probe any = 7
			if p, ok := probes[s.Path]; ok {
				probe = p
			}
			m[keys[len(keys)-1]] = probe
			_, perr := tenant.ParsePlatform(data)
			_, cerr := tenant.CertManagerNamespace(data, "cozy-cert-manager")
			_, oerr := tenant.CertificateOrders(data, "letsencrypt-prod")
			var msgs []string
			for _, err := range []error{perr, cerr, oerr} {
				if err != nil {
					msgs = append(msgs, err.Error())
				}
			}
			if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, s.Path) }) {
				t.Errorf("the function accepts %s: %v without naming the setting (errors: %q): it does not read it, or reads it elsewhere", s.Path, probe, msgs)
			}
		})
	}
}

// TestFlags: the flags are read from the CLI struct as kong names them.
func TestFlags(t *testing.T) {
	flags, err := Flags(filepath.Join("..", "..", "..", "fn", "cmd", "function", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range flags {
		got[f.Name] = f.Type + " " + f.Default
	}
	want := map[string]string{
		"network":               "string tcp",
		"clock":                 "string ",
		"tls-server-certs-dir":  "string ",
		"max-recv-message-size": "int 64",
		"ttl":                   "time.Duration 60s",
	}
	for name, w := range want {
		if diff := cmp.Diff(w, got[name]); diff != "" {
			t.Errorf("flag --%s (-want +got):\n%s", name, diff)
		}
	}
}
