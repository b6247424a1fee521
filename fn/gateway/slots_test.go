package gateway

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// www.n21218.alice.example.org and www.n29916.alice.example.org share
// their hex8 (found by brute force): one short name for two hostnames.
const (
	collideA = "www.n21218.alice.example.org"
	collideB = "www.n29916.alice.example.org"
)

func TestAllocateNames(t *testing.T) {
	long := strings.Repeat("l", 250) + ".example.org"
	cases := map[string]struct {
		reason    string
		hostnames []string
		served    map[string]string
		taken     []string
		want      []string
	}{
		"DistinctHostnames": {
			reason:    "Hostnames whose short names differ each get https-<label>-<hex8>",
			hostnames: []string{"a.example.org", "b.example.org"},
			want:      []string{"a.example.org https-a-" + Hex8("a.example.org"), "b.example.org https-b-" + Hex8("b.example.org")},
		},
		"CollisionByteSmallerKeepsShort": {
			reason:    "Nothing served: the byte-smaller hostname keeps the short name, the other takes the long form",
			hostnames: []string{collideA, collideB},
			want:      []string{collideA + " https-www-1810c934", collideB + " https-www-1810c93498cc3391"},
		},
		"CollisionServedKeepsShort": {
			reason:    "The hostname served under the short name keeps it, though it sorts last: its listener and Certificate are not renamed",
			hostnames: []string{collideA, collideB},
			served:    map[string]string{"https-www-1810c934": collideB},
			want:      []string{collideA + " https-www-" + Hex16(collideA), collideB + " https-www-1810c934"},
		},
		"ServedLongFormKept": {
			reason:    "A hostname served under its long form keeps it once the collision is gone, and frees the short name for the other",
			hostnames: []string{collideA, collideB},
			served:    map[string]string{"https-www-" + Hex16(collideA): collideA},
			want:      []string{collideA + " https-www-" + Hex16(collideA), collideB + " https-www-1810c934"},
		},
		"FixedNameTaken": {
			reason:    "A name a fixed listener holds is refused, never shared",
			hostnames: []string{"a.example.org"},
			taken:     []string{"https-a-" + Hex8("a.example.org")},
			want:      []string{"a.example.org https-a-" + Hex8("a.example.org") + " invalid: its listener name https-a-" + Hex8("a.example.org") + " is taken by another listener of the Gateway even in its long form"},
		},
		"TooLong": {
			reason:    "A name over the SectionName limit takes the hash form, never truncated and never refused",
			hostnames: []string{long},
			want:      []string{long + " https-h" + Hex16(long)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var slots []*slot
			for _, h := range tc.hostnames {
				slots = append(slots, &slot{prefix: pinPrefix(v1alpha1.CertModeHTTP01), subject: h, hostname: h})
			}
			taken := map[string]bool{}
			for _, n := range tc.taken {
				taken[n] = true
			}
			allocateNames(slots, tc.served, taken, func(n string) bool { return len(n) <= maxListenerName })
			var got []string
			for _, s := range slots {
				line := s.hostname + " " + s.name
				if s.invalid != "" {
					line += " invalid: " + s.invalid
				}
				got = append(got, line)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nallocateNames(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestAttackHashCollision(t *testing.T) {
	// Two pairs whose hex8 collide, found by brute force (minutes on two
	// cores): each pair derives one listener name.
	t.Run("TwoOwnHostnamesOneName", func(t *testing.T) {
		out := attack(t, Input{Spec: http01Spec, Namespaces: platform(), Routes: []Route{
			routeTo("tenant-alice", "a", "www.n21218.alice.example.org", "www.n29916.alice.example.org"),
		}})
		want := []string{
			"http ",
			"https-www-1810c934 www.n21218.alice.example.org",
			"https-www-1810c93498cc3391 www.n29916.alice.example.org",
		}
		if diff := cmp.Diff(want, listenerNames(out)); diff != "" {
			t.Errorf("the byte-smaller hostname keeps the short name, the other takes the long form: -want, +got:\n%s", diff)
		}
	})
	t.Run("AimedAtANeighbourBeingServed", func(t *testing.T) {
		// bob's harbor.bob.example.org is on the Gateway; alice crafts
		// harbor.x19ul5zj.alice.example.org, whose name collides.
		served := &kube.ObservedResource{ListenerNames: []string{"http", "https-harbor-3005190e"}, ListenerHostnames: map[string]string{"http": "", "https-harbor-3005190e": "harbor.bob.example.org"}}
		out := attack(t, Input{Spec: http01Spec, Namespaces: platform(), Observed: map[string]*kube.ObservedResource{KeyGateway: served}, Routes: []Route{
			routeTo("tenant-bob", "harbor", "harbor.bob.example.org"),
			routeTo("tenant-alice", "x", "harbor.x19ul5zj.alice.example.org"),
		}})
		want := []string{
			"http ",
			"https-harbor-3005190e harbor.bob.example.org",
			"https-harbor-3005190ef4187f1a harbor.x19ul5zj.alice.example.org",
		}
		if diff := cmp.Diff(want, listenerNames(out)); diff != "" {
			t.Errorf("the served hostname keeps its listener and Certificate: -want, +got:\n%s", diff)
		}
	})
	t.Run("NeighbourServedUnderTheLongForm", func(t *testing.T) {
		// alice's crafted hostname was served first, so bob's took the
		// long form; alice's route goes away and comes back: bob keeps
		// the long form he is served under, nothing is renamed.
		served := &kube.ObservedResource{ListenerNames: []string{"http", "https-harbor-3005190e4f1e308f"}, ListenerHostnames: map[string]string{"https-harbor-3005190e4f1e308f": "harbor.bob.example.org"}}
		out := attack(t, Input{Spec: http01Spec, Namespaces: platform(), Observed: map[string]*kube.ObservedResource{KeyGateway: served}, Routes: []Route{
			routeTo("tenant-bob", "harbor", "harbor.bob.example.org"),
		}})
		if diff := cmp.Diff([]string{"http ", "https-harbor-3005190e4f1e308f harbor.bob.example.org"}, listenerNames(out)); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
	})
}
