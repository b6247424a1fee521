package tenant

import (
	"fmt"
	"strings"
	"time"

	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
)

// PathCertificateOrders is where the platform settings hold the ACME order
// quotas, by issuer name (see Certificate orders in docs/design.md).
var PathCertificateOrders = []string{"gateway", "certificateOrders"}

// orderQuotaSetting is one issuer's entry of gateway.certificateOrders.
type orderQuotaSetting struct {
	// Limit is the orders per registered domain within Window; 0 is no
	// bound.
	Limit *int `json:"limit"`
	// Window is a Go duration ("168h").
	Window string `json:"window,omitempty"`
}

// Bounds of the window a platform may set.
const (
	minOrderWindow = time.Hour
	maxOrderWindow = 90 * 24 * time.Hour
)

// CertificateOrders reads the order quota of issuer from the platform
// setting gateway.certificateOrders.<issuer>; unset, it is Let's Encrypt's
// published limit for an issuer named letsencrypt-*, and no bound for any
// other (the function cannot know another CA's limits). TenantGateways read
// it apart from the Tenant settings, as CertManagerNamespace.
func CertificateOrders(data map[string]any, issuer string) (acme.OrderQuota, error) {
	q := acme.OrderQuota{Window: acme.LetsEncryptQuota.Window}
	if strings.HasPrefix(issuer, acme.LetsEncryptIssuerPrefix) {
		q = acme.LetsEncryptQuota
	}
	r := reader{data: data}
	all, ok := r.get(PathCertificateOrders...).(map[string]any)
	if !ok {
		if v := r.get(PathCertificateOrders...); v != nil {
			return q, fmt.Errorf("platform setting %s must map issuer names to {limit, window}, not %v", strings.Join(PathCertificateOrders, "."), v)
		}
		return q, nil
	}
	v, ok := all[issuer]
	if !ok {
		return q, nil
	}
	path := strings.Join(PathCertificateOrders, ".") + "[" + issuer + "]"
	var s orderQuotaSetting
	if err := jsonobj.DecodeStrict(v, &s); err != nil {
		return q, fmt.Errorf("platform setting %s: %w", path, err)
	}
	if s.Limit == nil || *s.Limit < 0 || *s.Limit > acme.MaxOrderQuota {
		return q, fmt.Errorf("platform setting %s.limit must be set, between 0 (no bound) and %d", path, acme.MaxOrderQuota)
	}
	q.Limit = *s.Limit
	w, err := orderWindow(path, s.Window, q.Window)
	q.Window = w
	return q, err
}

// orderWindow reads the window setting of path, def when unset.
func orderWindow(path, s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	w, err := time.ParseDuration(s)
	if err != nil || w < minOrderWindow || w > maxOrderWindow {
		return def, fmt.Errorf("platform setting %s.window %q must be a duration between %s and %s, such as \"168h\"", path, s, minOrderWindow, maxOrderWindow)
	}
	return w, nil
}

// PlatformApex is the platform's apex (publishing.host), "" when unset: the
// order ledger names the branches of the whole registered domain under it.
func PlatformApex(data map[string]any) string {
	s, _ := (&reader{data: data}).get("publishing", "host").(string)
	return s
}
