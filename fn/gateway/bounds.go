package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
	"unicode/utf8"
)

// MaxMessage bounds every condition message and warning: Crossplane copies
// them into the XR's status and into events, and a tenant can make the
// lists in them as long as it likes.
const MaxMessage = 1024

// BoundedList is prefix, then as many items joined by sep as fit within
// MaxMessage, then "… and N more" for the rest, then suffix.
func BoundedList(prefix string, items []string, sep, suffix string) string {
	return boundedListOf(prefix, items, len(items), sep, suffix)
}

// boundedListOf is BoundedList for the first items of a list of total.
func boundedListOf(prefix string, items []string, total int, sep, suffix string) string {
	return boundedListWithin(MaxMessage, prefix, items, total, sep, suffix)
}

// boundedListWithin is boundedListOf within limit bytes rather than
// MaxMessage.
func boundedListWithin(limit int, prefix string, items []string, total int, sep, suffix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	shown := 0
	for i, it := range items {
		add := it
		if i > 0 {
			add = sep + it
		}
		// Keep room for saying how many are left out after this one.
		tail := ""
		if rest := total - i - 1; rest > 0 {
			tail = fmt.Sprintf("%s… and %d more", sep, rest)
		}
		if b.Len()+len(add)+len(tail)+len(suffix) > limit {
			break
		}
		b.WriteString(add)
		shown++
	}
	if shown < total {
		if shown > 0 {
			b.WriteString(sep)
		}
		fmt.Fprintf(&b, "… and %d more", total-shown)
	}
	b.WriteString(suffix)
	return truncateTo(b.String(), limit)
}

// Truncate cuts a message at MaxMessage bytes, on a rune boundary: a list
// whose prefix is still too long, or a message that is not a list, such as a
// refusal quoting its input.
func Truncate(s string) string { return truncateTo(s, MaxMessage) }

// truncateTo cuts s at limit bytes, on a rune boundary.
func truncateTo(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const ellipsis = "…"
	cut := limit - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}

// A lineDigest is a short, stable digest of a list of lines, written as a
// stream, so that status can remember a list it does not hold.
type lineDigest struct {
	h hash.Hash
	n int
}

func newLineDigest() *lineDigest { return &lineDigest{h: sha256.New()} }

func (d *lineDigest) add(line string) {
	d.n++
	d.h.Write([]byte(line))
	d.h.Write([]byte{'\n'})
}

// sum is the first 16 hex digits of the digest; "" for no lines.
func (d *lineDigest) sum() string {
	if d.n == 0 {
		return ""
	}
	return hex.EncodeToString(d.h.Sum(nil)[:8])
}
