package gateway

import (
	"strings"
	"testing"
)

func TestLineDigest(t *testing.T) {
	digest := func(lines ...string) string {
		d := newLineDigest()
		for _, l := range lines {
			d.add(l)
		}
		return d.sum()
	}
	if got := digest(); got != "" {
		t.Errorf("no lines: want no digest, got %q", got)
	}
	ab := digest("a", "b")
	if len(ab) != 16 || strings.Trim(ab, "0123456789abcdef") != "" {
		t.Errorf("want 16 hex digits, got %q", ab)
	}
	for _, other := range [][]string{{"b", "a"}, {"a"}, {"a", "b", "c"}, {"ab"}} {
		if got := digest(other...); got == ab {
			t.Errorf("digest of %q equals that of [a b]: %s", other, got)
		}
	}
	if got := digest("a", "b"); got != ab {
		t.Errorf("the same lines: want %s, got %s", ab, got)
	}
}
