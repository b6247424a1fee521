package gateway

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

func TestCommonLabels(t *testing.T) {
	cases := map[string]struct {
		reason string
		name   string
		want   map[string]string
	}{
		"ManagedAndOwned": {
			reason: "Every composed object says the function manages it and which TenantGateway it belongs to",
			name:   "cozystack",
			want:   map[string]string{kube.LabelManagedBy: kube.ManagedBy, kube.LabelTenantGateway: "cozystack"},
		},
		"LongestLabelValue": {
			reason: "A TenantGateway name of 63 characters is still a valid label value",
			name:   strings.Repeat("t", 63),
			want:   map[string]string{kube.LabelManagedBy: kube.ManagedBy, kube.LabelTenantGateway: strings.Repeat("t", 63)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := &Input{Name: tc.name, Namespace: "tenant-root"}
			got := commonLabels(in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ncommonLabels(...): -want, +got:\n%s", tc.reason, diff)
			}
			for k, v := range got {
				if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
					t.Errorf("%s\nlabel %s=%s: %v", tc.reason, k, v, errs)
				}
			}
			// A caller adds its own labels to the map it gets: that must
			// not reach the next object's labels.
			got[kube.LabelPerListenerCert] = "true"
			if diff := cmp.Diff(tc.want, commonLabels(in)); diff != "" {
				t.Errorf("%s\ncommonLabels(...) after a caller added a label: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
