package fn

import "time"

// DefaultTTL is how long Crossplane may cache a response, and the longest
// it waits to run a composition again. Crossplane v2.4 watches what a
// pipeline required and re-runs the XRs that required a changed object
// (realtime compositions), so a new route reaches its TenantGateway on the
// route's own event; the TTL only bounds what no event reports (see
// Calls per reconcile in docs/design.md). The series of a TenantGateway on
// the metrics endpoint expire after SeriesExpiryTTLs of it.
const DefaultTTL = 60 * time.Second
