// Package text bounds and quotes the text the function writes for people:
// condition messages, warnings and refusals. Both computations (fn/gateway
// for a TenantGateway, fn/tenant for a Tenant) and the operators' commands
// write such text, and Crossplane copies it into status and events, so the
// bound and the way lists are cut or quoted are decided here once rather
// than in either computation.
package text

import (
	"fmt"
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
	return BoundedListOf(prefix, items, len(items), sep, suffix)
}

// BoundedListOf is BoundedList for the first items of a list of total.
func BoundedListOf(prefix string, items []string, total int, sep, suffix string) string {
	return BoundedListWithin(MaxMessage, prefix, items, total, sep, suffix)
}

// BoundedListWithin is BoundedListOf within limit bytes rather than
// MaxMessage.
func BoundedListWithin(limit int, prefix string, items []string, total int, sep, suffix string) string {
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
	return TruncateTo(b.String(), limit)
}

// Truncate cuts a message at MaxMessage bytes, on a rune boundary: a list
// whose prefix is still too long, or a message that is not a list, such as a
// refusal quoting its input.
func Truncate(s string) string { return TruncateTo(s, MaxMessage) }

// TruncateTo cuts s at limit bytes, on a rune boundary.
func TruncateTo(s string, limit int) string {
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

// Quoted lists allowed values as "a", "b", the way every refusal names
// them (refusals of the Tenant derivation put them in brackets).
func Quoted[T ~string](l []T) string {
	s := make([]string, len(l))
	for i, v := range l {
		s[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(s, ", ")
}
