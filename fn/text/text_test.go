package text

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBounds(t *testing.T) {
	item := strings.Repeat("x", 100)
	twenty := make([]string, 20)
	for i := range twenty {
		twenty[i] = item
	}
	cases := map[string]struct {
		reason string
		got    string
		want   string
	}{
		"ListFits": {
			reason: "A list within the bound is written whole, with its prefix and suffix",
			got:    BoundedList("p: ", []string{"a", "b"}, ", ", " (s)"),
			want:   "p: a, b (s)",
		},
		"ListCut": {
			reason: "Items are written while they and the count of the rest fit in MaxMessage bytes: 9 of 20 items of 100 bytes",
			got:    BoundedList("p: ", twenty, ", ", ""),
			want:   "p: " + strings.Join(twenty[:9], ", ") + ", … and 11 more",
		},
		"ListOfMore": {
			reason: "A list of the first items of a longer one counts the items not given",
			got:    BoundedListOf("p: ", []string{"a"}, 3, ", ", ""),
			want:   "p: a, … and 2 more",
		},
		"ShortMessage": {
			reason: "A message within the bound is unchanged",
			got:    Truncate("short"),
			want:   "short",
		},
		"CutOnARuneBoundary": {
			reason: "A long message is cut within MaxMessage bytes, never inside a rune, and ends with an ellipsis",
			got:    Truncate(strings.Repeat("é", 600)),
			want:   strings.Repeat("é", 510) + "…",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if len(tc.got) > MaxMessage {
				t.Errorf("%s\n%d bytes, over MaxMessage", tc.reason, len(tc.got))
			}
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
