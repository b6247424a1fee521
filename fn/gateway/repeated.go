package gateway

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// withoutRepeats returns the spec with every repeated entry of
// attachedNamespaces and tlsPassthroughServices dropped (the first stays,
// in place), and one line per dropped entry naming the field. The Cozystack
// gateway chart renders the platform's attached namespaces as they are
// written, repeats included, and the Cozystack controller used each once;
// refusing them would stall a migrated platform (see Differences from the
// Cozystack controller in docs/design.md), so they are used once and
// reported in a Warning event instead.
func withoutRepeats(s v1alpha1.TenantGatewaySpec) (v1alpha1.TenantGatewaySpec, []string) {
	p := field.NewPath("spec")
	attached, attachedLines := dedupLabels(p.Child("attachedNamespaces"), s.AttachedNamespaces)
	services, serviceLines := dedupLabels(p.Child("tlsPassthroughServices"), s.TLSPassthroughServices)
	s.AttachedNamespaces, s.TLSPassthroughServices = attached, services
	return s, append(attachedLines, serviceLines...)
}

// dedupLabels keeps the first of each entry of l (a copy when anything is
// dropped, so the caller's slice is never changed).
func dedupLabels(p *field.Path, l []v1alpha1.DNSLabel) ([]v1alpha1.DNSLabel, []string) {
	first := make(map[v1alpha1.DNSLabel]int, len(l))
	var out []v1alpha1.DNSLabel
	var lines []string
	for i, v := range l {
		j, seen := first[v]
		if !seen {
			first[v] = i
			if out != nil {
				out = append(out, v)
			}
			continue
		}
		if out == nil {
			out = append(make([]v1alpha1.DNSLabel, 0, len(l)), l[:i]...)
		}
		lines = append(lines, fmt.Sprintf("%s: %q repeats %s", p.Index(i), v, p.Index(j)))
	}
	if out == nil {
		return l, nil
	}
	return out, lines
}
