package tenant

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-tenant-gateway/fn/acme"
)

func TestCertificateOrders(t *testing.T) {
	week := 7 * 24 * time.Hour
	for name, tc := range map[string]struct {
		data    map[string]any
		issuer  string
		want    acme.OrderQuota
		wantErr string
	}{
		"LetsEncryptByDefault": {issuer: "letsencrypt-prod", want: acme.OrderQuota{Limit: 50, Window: week}},
		"StagingToo":           {issuer: "letsencrypt-stage", want: acme.OrderQuota{Limit: 50, Window: week}},
		"OtherCANoBound":       {issuer: "corp-ca", want: acme.OrderQuota{Window: week}},
		"Set": {
			data:   map[string]any{"gateway": map[string]any{"certificateOrders": map[string]any{"corp-ca": map[string]any{"limit": 300, "window": "24h"}}}},
			issuer: "corp-ca", want: acme.OrderQuota{Limit: 300, Window: 24 * time.Hour},
		},
		"Lifted": {
			data:   map[string]any{"gateway": map[string]any{"certificateOrders": map[string]any{"letsencrypt-prod": map[string]any{"limit": 0}}}},
			issuer: "letsencrypt-prod", want: acme.OrderQuota{Window: week},
		},
		"OtherIssuerSet": {
			data:   map[string]any{"gateway": map[string]any{"certificateOrders": map[string]any{"corp-ca": map[string]any{"limit": 5}}}},
			issuer: "letsencrypt-prod", want: acme.OrderQuota{Limit: 50, Window: week},
		},
		"Misspelt": {
			data:    map[string]any{"gateway": map[string]any{"certificateOrders": map[string]any{"corp-ca": map[string]any{"limt": 5}}}},
			issuer:  "corp-ca",
			wantErr: `platform setting gateway.certificateOrders[corp-ca]: json: unknown field "limt"`,
		},
		"NoLimit": {
			data:    map[string]any{"gateway": map[string]any{"certificateOrders": map[string]any{"corp-ca": map[string]any{"window": "24h"}}}},
			issuer:  "corp-ca",
			wantErr: "platform setting gateway.certificateOrders[corp-ca].limit must be set, between 0 (no bound) and 1000",
		},
		"BadWindow": {
			data:    map[string]any{"gateway": map[string]any{"certificateOrders": map[string]any{"corp-ca": map[string]any{"limit": 5, "window": "1w"}}}},
			issuer:  "corp-ca",
			wantErr: `platform setting gateway.certificateOrders[corp-ca].window "1w" must be a duration between 1h0m0s and 2160h0m0s, such as "168h"`,
		},
		"NotAMap": {
			data:    map[string]any{"gateway": map[string]any{"certificateOrders": []any{"x"}}},
			issuer:  "corp-ca",
			wantErr: "platform setting gateway.certificateOrders must map issuer names to {limit, window}, not [x]",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := CertificateOrders(tc.data, tc.issuer)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
