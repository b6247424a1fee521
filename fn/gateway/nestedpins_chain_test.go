package gateway

import (
	"fmt"
	"slices"
	"testing"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// TestAttackWildcardPinShapes: the attacker names the pin of a wildcard two
// levels above a name (it holds both pins), in each form of the pin's name;
// a rival routes the name; the budget full or one place short; runs fed
// back, the attacker's route leaving and coming back. No run may list a
// domain twice, and the same input must give the same output.
func TestAttackWildcardPinShapes(t *testing.T) {
	bobWithAlicesHost := labelled("tenant-alice-bob", "alice.example.org")
	forms := map[string]func(string) string{"short": HostKey, "long": LongHostKey, "hash": HashHostKey}
	for _, c := range []struct {
		name          string
		namespaces    []Namespace
		wildcards     []string // contested by winner and rival, in that order
		named, host   string
		winner, rival string
		attacker      string
	}{
		{"two-levels", platform(), []string{"*.apps.example.org", "*.x.apps.example.org"}, "*.apps.example.org", "a.x.apps.example.org", "cozy-dashboard", "tenant-root", "cozy-dashboard"},
		{"nested-two-levels", append(platform(), bobWithAlicesHost), []string{"*.apps.alice.example.org", "*.x.apps.alice.example.org"}, "*.apps.alice.example.org", "a.x.apps.alice.example.org", "tenant-alice-bob", "tenant-alice", "tenant-alice-bob"},
	} {
		for sname, spec := range map[string]v1alpha1.TenantGatewaySpec{"Edge": edgeSpec, "ExistingSecret": existingSpec} {
			for fname, form := range forms {
				for free := 0; free <= 1; free++ {
					t.Run(fmt.Sprintf("%s/%s/%s/%d-free", c.name, sname, fname, free), func(t *testing.T) {
						attacker := naming(pinPrefix(spec.CertMode)+form(c.named), 0, c.attacker, "grab", c.host)
						rival := routeTo(c.rival, "own", c.host)
						if c.attacker == c.rival {
							rival = routeTo(c.winner, "own", c.host)
						}
						var base []Route
						for i, w := range c.wildcards {
							base = append(base, routeTo(c.winner, fmt.Sprintf("wild%d", i), w), routeTo(c.rival, fmt.Sprintf("wild%d", i), w))
						}
						fnss, froutes := fillers(max(0, budgetFull(spec)-len(c.wildcards)-1-free))
						base = append(base, froutes...)
						nss := append(slices.Clone(c.namespaces), fnss...)
						steps := [][]Route{base, append(slices.Clone(base), attacker), append(slices.Clone(base), attacker, rival), append(slices.Clone(base), rival), append(slices.Clone(base), rival, attacker), append(slices.Clone(base), rival, attacker)}
						var in Input
						var out *Output
						var last string
						for i, rs := range steps {
							if out == nil {
								in = Input{Spec: spec, Namespaces: nss, Routes: rs}
							} else {
								next := fedBack(in, out)
								next.Routes = append(slices.Clone(rs), composedRoutes(t, out)...)
								in = next
							}
							out = attackP(t, &in)
							if d := listedTwice(t, &in, out); len(d) > 0 {
								t.Errorf("run %d: listed twice %v", i+1, d)
							}
							v := fmt.Sprint(listenerNames(out), hostnameStates(out))
							if i == len(steps)-1 && v != last {
								t.Errorf("run %d differs from run %d with the same input", i+1, i)
							}
							last = v
						}
					})
				}
			}
		}
	}
}

// TestAttackGuardedPinBreaksANestedChain: keepNestedWhole runs before
// keepGuarded, and is not run again. A name under two nested wildcard pins
// of a contest's winner (*.apps and *.x.apps, both pinned) is routed by a
// namespace neither pin admits (the loser); its own pin finds no place, so
// keepGuarded leaves out the inner pin *.x.apps (new) that would take the
// name from it. The outer pin *.apps, whose names needed the inner one
// (within), stays: the winner's *.x.apps route attaches to the outer pin
// and to the wider listener that admits it too, and the shared table
// lists *.x.apps under both (Envoy refuses port 80's table whole; Cilium's
// 443). The loser is moreover kept off its wider listener as a whole.
// Reachable with a publisher beating the owner, or alice with her nested
// tenant bob given her host; no sectionName involved; fails at de11b47 too.
func TestAttackGuardedPinBreaksANestedChain(t *testing.T) {
	bob := labelled("tenant-alice-bob", "alice.example.org")
	for _, c := range []struct {
		name          string
		nss           []Namespace
		domain        string
		winner, loser string
		places        int // listener places the case takes when all fit, but the loser's name pin
	}{
		{"publisher", platform(), "example.org", "cozy-dashboard", "tenant-root", 2},
		{"nested", append(platform(), bob), "alice.example.org", "tenant-alice-bob", "tenant-alice", 3},
	} {
		for sname, spec := range map[string]v1alpha1.TenantGatewaySpec{"Edge": edgeSpec, "ExistingSecret": existingSpec} {
			t.Run(c.name+"/"+sname, func(t *testing.T) {
				fnss, froutes := fillers(budgetFull(spec) - c.places)
				in := Input{Spec: spec, Namespaces: append(slices.Clone(c.nss), fnss...), Routes: append(froutes,
					routeTo(c.winner, "wild0", "*.apps."+c.domain), routeTo(c.loser, "wild0", "*.apps."+c.domain),
					routeTo(c.winner, "wild1", "*.x.apps."+c.domain), routeTo(c.loser, "wild1", "*.x.apps."+c.domain),
					routeTo(c.loser, "own", "a.x.apps."+c.domain),
				)}
				out := twice(t, in)
				t.Logf("%v", listenerNames(out))
			})
		}
	}
}
