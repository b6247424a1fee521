package envoy

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cozystack/function-tenant-gateway/test/render"
)

// TestExamples loads every scenario's golden render (examples/*/expected.yaml,
// what `make render` writes) and has the translator judge its Gateway. It
// checks only that the harness can: what Envoy Gateway says of each Gateway
// is logged (go test -v), not asserted, until the function composes
// protocol-correct listeners for classes other than Cilium's (issue #13).
func TestExamples(t *testing.T) {
	egctl := Egctl(t)
	root, err := render.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	scenarios, err := render.Scenarios(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			s, err := LoadScenario(sc.Dir, filepath.Join(sc.Dir, render.FileExpected))
			if errors.Is(err, ErrNoGateway) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			r, err := Translate(context.Background(), egctl, s)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(summarise(r))
		})
	}
}

// summarise is a line per listener, route and port-443 server name.
func summarise(r *Result) string {
	var lines []string
	lines = append(lines, fmt.Sprintf("Gateway %s/%s: %+v (%d translator runs)", r.Gateway.Namespace, r.Gateway.Name, r.GatewayAccepted(), len(r.Runs)))
	ls := r.Listeners()
	for _, name := range sortedKeys(ls) {
		lines = append(lines, fmt.Sprintf("listener %s: %+v attached=%d", name, ls[name].Conditions, ls[name].AttachedRoutes))
	}
	for _, h := range r.HTTPRoutes {
		p, _ := r.RouteParents(kindHTTPRoute, h.Namespace, h.Name)
		lines = append(lines, fmt.Sprintf("HTTPRoute %s/%s: %+v", h.Namespace, h.Name, p))
	}
	for _, tr := range r.TLSRoutes {
		p, _ := r.RouteParents(kindTLSRoute, tr.Namespace, tr.Name)
		lines = append(lines, fmt.Sprintf("TLSRoute %s/%s: %+v", tr.Namespace, tr.Name, p))
	}
	sni := r.SNI(443)
	for _, n := range sortedKeys(sni) {
		lines = append(lines, fmt.Sprintf("SNI %s: %+v", n, sni[n]))
	}
	unc := r.Uncovered(443)
	for _, d := range sortedKeys(unc) {
		lines = append(lines, fmt.Sprintf("uncovered %s: %+v", d, unc[d]))
	}
	for port, m := range map[int32]map[string][]string{443: r.DomainBackends(443), 80: r.DomainBackends(80)} {
		for _, d := range sortedKeys(m) {
			lines = append(lines, fmt.Sprintf("port %d %s -> %v", port, d, m[d]))
		}
	}
	sort.Strings(lines[1:])
	return strings.Join(lines, "\n")
}
