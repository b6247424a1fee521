package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

func TestWithoutRepeats(t *testing.T) {
	l := func(v ...v1alpha1.DNSLabel) []v1alpha1.DNSLabel { return v }
	cases := map[string]struct {
		reason    string
		attached  []v1alpha1.DNSLabel
		services  []v1alpha1.DNSLabel
		wantAtt   []v1alpha1.DNSLabel
		wantSvc   []v1alpha1.DNSLabel
		wantLines []string
	}{
		"None": {
			reason:   "lists without repeats come back as they are, with nothing to report",
			attached: l("cozy-dashboard", "default"), services: l("api"),
			wantAtt: l("cozy-dashboard", "default"), wantSvc: l("api"),
		},
		"Empty": {reason: "no lists, nothing to report"},
		"AttachedNamespaces": {
			reason:   "the Cozystack chart's list with repeats: each kept once, where it first appears, and every repeat named by field and index",
			attached: l("cozy-harbor", "default", "cozy-harbor", "cozy-dashboard", "default", "cozy-harbor"),
			wantAtt:  l("cozy-harbor", "default", "cozy-dashboard"),
			wantLines: []string{
				`spec.attachedNamespaces[2]: "cozy-harbor" repeats spec.attachedNamespaces[0]`,
				`spec.attachedNamespaces[4]: "default" repeats spec.attachedNamespaces[1]`,
				`spec.attachedNamespaces[5]: "cozy-harbor" repeats spec.attachedNamespaces[0]`,
			},
		},
		"PassthroughServices": {
			reason:   "a repeated passthrough service would give two listeners of one name: kept once",
			services: l("api", "vm-exportproxy", "api"), wantSvc: l("api", "vm-exportproxy"),
			wantLines: []string{`spec.tlsPassthroughServices[2]: "api" repeats spec.tlsPassthroughServices[0]`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := v1alpha1.TenantGatewaySpec{AttachedNamespaces: tc.attached, TLSPassthroughServices: tc.services}
			before := in.DeepCopy()
			got, lines := withoutRepeats(in)
			if diff := cmp.Diff(tc.wantAtt, got.AttachedNamespaces); diff != "" {
				t.Errorf("%s\nattachedNamespaces: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantSvc, got.TLSPassthroughServices); diff != "" {
				t.Errorf("%s\ntlsPassthroughServices: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantLines, lines); diff != "" {
				t.Errorf("%s\nreported: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(before, &in); diff != "" {
				t.Errorf("the caller's spec changed:\n%s", diff)
			}
		})
	}
}

// TestRepeatedEntriesCompose: a spec with repeated entries is composed (not
// refused), the repeated namespace patched once, and the repeats reported
// in one Warning event that is not raised again while they stay.
func TestRepeatedEntriesCompose(t *testing.T) {
	spec := v1alpha1.TenantGatewaySpec{AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-dashboard", "default", "cozy-dashboard"}}
	named := map[string]*Namespace{"tenant-root": {Name: "tenant-root"}, "cozy-dashboard": {Name: "cozy-dashboard"}, "default": {Name: "default"}}
	first := run(t, Input{Spec: spec, NamedNamespaces: named})
	want := []string{`the spec repeats 1 list entries, each used once (remove the repeats): spec.attachedNamespaces[2]: "cozy-dashboard" repeats spec.attachedNamespaces[0]`}
	if diff := cmp.Diff(want, first.Warnings); diff != "" {
		t.Errorf("first run warnings: -want, +got:\n%s", diff)
	}
	var patched []string
	for _, r := range first.Resources {
		if ns, ok := NamespaceOfKey(r.Key); ok {
			patched = append(patched, ns)
		}
	}
	if diff := cmp.Diff([]string{"tenant-root", "cozy-dashboard", "default"}, patched); diff != "" {
		t.Errorf("namespaces patched: -want, +got:\n%s", diff)
	}
	second := run(t, Input{Spec: spec, NamedNamespaces: named, Previous: PreviousStatus{Digests: first.Digests}})
	if len(second.Warnings) != 0 {
		t.Errorf("nothing changed: want no warning, got %q", second.Warnings)
	}
	fixed := run(t, Input{Spec: v1alpha1.TenantGatewaySpec{AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-dashboard", "default"}}, Previous: PreviousStatus{Digests: first.Digests}})
	if len(fixed.Warnings) != 0 || fixed.Digests.Repeated != "" {
		t.Errorf("repeats removed: want no warning and no digest, got %q and %q", fixed.Warnings, fixed.Digests.Repeated)
	}
}
