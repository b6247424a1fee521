package gateway

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// The ACME order budget (see "Certificate orders" in docs/design.md): ACME
// CAs limit the certificates issued per registered domain per week, shared
// by every tenant of the apex, so no branch of the delegation tree may cause
// more than spec.acmeOrdersPerBranch orders per OrderWindow. An order is a
// Certificate the function composes anew, or a change of the dns01
// certificate's names.
const (
	OrderWindow = 7 * 24 * time.Hour
	// maxOrders bounds status.orders.
	maxOrders = 1000
)

// A ledger is the orders of the window, read from the status the last run
// wrote and kept in it.
type ledger struct {
	now time.Time
	// limit is the orders per branch in the window; 0 for no bound.
	limit   int
	entries []v1alpha1.OrderStatus
}

// newLedger keeps the orders of the last run's status still in the window.
func newLedger(in *Input) *ledger {
	l := &ledger{now: in.Now.UTC().Truncate(time.Second), limit: int(*in.Spec.ACMEOrdersPerBranch)}
	for _, o := range in.Previous.Orders {
		if o.At.Add(OrderWindow).After(l.now) && !o.At.After(l.now) {
			l.entries = append(l.entries, o)
		}
	}
	return l
}

// remaining is how many orders branch may still cause in the window.
func (l *ledger) remaining(branch string) int {
	if l.limit == 0 {
		return maxOrders
	}
	n := 0
	for _, o := range l.entries {
		if o.Branch == branch {
			n++
		}
	}
	return max(l.limit-n, 0)
}

// until is when branch may order again: its oldest order of the window
// leaves it.
func (l *ledger) until(branch string) time.Time {
	for _, o := range l.entries {
		if o.Branch == branch {
			return o.At.Add(OrderWindow)
		}
	}
	return l.now
}

// record charges branch with an order of certificate.
func (l *ledger) record(branch, certificate string) {
	l.entries = append(l.entries, v1alpha1.OrderStatus{Branch: branch, Certificate: certificate, At: metav1.NewTime(l.now)})
}

// latest is the certificate key of the newest order whose key starts with
// prefix, or "".
func (l *ledger) latest(prefix string) string {
	for i := len(l.entries) - 1; i >= 0; i-- {
		if strings.HasPrefix(l.entries[i].Certificate, prefix) {
			return l.entries[i].Certificate
		}
	}
	return ""
}

// status is status.orders: in time order, the newest maxOrders.
func (l *ledger) status() []v1alpha1.OrderStatus {
	out := slices.Clone(l.entries)
	slices.SortStableFunc(out, func(a, b v1alpha1.OrderStatus) int { return a.At.Compare(b.At.Time) })
	if len(out) > maxOrders {
		out = out[len(out)-maxOrders:]
	}
	return out
}

// waitMessage says why a change waits and until when.
func (l *ledger) waitMessage(branch, what string) string {
	return fmt.Sprintf("%s waits for a certificate order: branch %s caused %d orders in the last %s, at most %d (spec.acmeOrdersPerBranch: the ACME CA's weekly limits are shared by every tenant); it may order again after %s",
		what, branch, l.limit-l.remaining(branch), OrderWindow, l.limit, l.until(branch).UTC().Format(time.RFC3339))
}

// branch is the branch of the delegation tree ns belongs to, as the
// budgets' round-robin takes turns: the owner, an attached namespace, or
// the child apex one label below the apex with everything under it.
func (t *tenancy) branch(ns string) string {
	_, name := t.turn(ns)
	if name == "" {
		return t.owner
	}
	return strings.TrimPrefix(name, "=")
}

// branchOfApex is the branch of a child apex no namespace holds any more.
func (t *tenancy) branchOfApex(apex string) string {
	if rest, ok := strings.CutSuffix(apex, "."+t.apex); ok {
		return rest[strings.LastIndexByte(rest, '.')+1:] + "." + t.apex
	}
	return apex
}

// certificateState is what the function knows of a Certificate it is about
// to compose: observed as ours, found by its probe (ours: the guard refuses
// another's), found absent, or not looked up yet.
type certificateState int

const (
	certificateUnknown certificateState = iota
	certificateExists
	certificateAbsent
)

func certificateAt(in *Input, key string) certificateState {
	if _, ok := in.Observed[key]; ok {
		return certificateExists
	}
	p, ok := in.Probes[key]
	switch {
	case !ok:
		// Crossplane calls the function again with the probe answered
		// before it applies anything: no decision yet.
		return certificateUnknown
	case p.Exists:
		return certificateExists
	}
	return certificateAbsent
}

// orderHTTP01 charges the new Certificates of the kept http01 listeners to
// their branches and holds back those whose branch has no order left: they
// lose their listener this run and their claims wait. A Certificate is new
// when it is neither observed (nor found by its probe) nor composed by the
// last run (status.listeners has its hostname): so an order is counted once,
// even before Crossplane observes what it applied, and a hostname dropped
// and asked for again is a new order. It returns the held slots, whose
// Certificates stay probed so that the decision holds.
func orderHTTP01(in *Input, t *tenancy, l *ledger, slots []*slot) []*slot {
	composed := make(map[string]bool, len(in.Previous.Listeners))
	for _, h := range in.Previous.Listeners {
		composed[h] = true
	}
	var held []*slot
	for _, s := range slots {
		if !s.kept || composed[s.hostname] || certificateAt(in, CertificateKey(s.name)) != certificateAbsent {
			continue
		}
		b := t.branch(s.namespace)
		if l.remaining(b) == 0 {
			s.kept, s.waiting = false, l.waitMessage(b, s.hostname)
			held = append(held, s)
			continue
		}
		l.record(b, s.hostname)
	}
	return held
}

// holdDNS01 keeps the dns01 certificate's names for the branches that have
// no order left: a child apex new to the certificate waits (no names, no
// listener), and the names of one leaving it stay, whether its zone went
// idle or its namespace is gone (those are returned, to stay on the
// certificate). Only an observed certificate is compared: the first one is
// the owner's order.
func holdDNS01(in *Input, t *tenancy, l *ledger, children []*child) []string {
	cert := in.Observed[KeyCertificateWildcard]
	if cert == nil {
		return nil
	}
	onCert := domains(cert.DNSNames)
	present := map[string]bool{}
	for _, c := range children {
		present[c.apex] = true
		if b := t.branch(c.namespace); l.remaining(b) == 0 {
			holdChild(l, b, c, onCert[c.apex])
		}
	}
	var kept []string
	for a := range onCert {
		if a != in.Spec.Apex && !present[a] && l.remaining(t.branchOfApex(a)) == 0 {
			kept = append(kept, a)
		}
	}
	slices.Sort(kept)
	return kept
}

// keyDNS01 prefixes the dns01 certificate's orders: the digest of its names.
const keyDNS01 = "dns01:"

// holdChild keeps a child apex of a branch with no order left as the
// certificate has it: new to it, it waits; on it, it stays.
// An idle zone new to it is left to the name cap, which makes it Idle; an
// idle zone on it stays unless the cap gives its place to a newcomer, whose
// branch that order is charged to (orderDNS01), not this one's.
func holdChild(l *ledger, branch string, c *child, onCert bool) {
	switch listening := c.state == v1alpha1.ChildApexListening; {
	case listening && !onCert && !c.idle:
		c.state, c.message = v1alpha1.ChildApexWaiting, l.waitMessage(branch, "adding "+c.apex+" to the wildcard certificate")
	case !listening && onCert && c.state != v1alpha1.ChildApexOutsideApex:
		c.state, c.message, c.held, c.frozen = v1alpha1.ChildApexListening, "", true, true
	}
}

// domains are the domains a certificate's names cover: each name without
// its wildcard label.
func domains(names []string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[base(n)] = true
	}
	return out
}

// orderDNS01 charges a change of the dns01 certificate's names to every
// branch whose child apexes it adds or removes (the owner's for the first
// certificate), once: a change already ordered is not charged again while
// Crossplane has not observed it.
func orderDNS01(in *Input, t *tenancy, l *ledger, children []*child, names []string) {
	key := keyDNS01 + Hex8(strings.Join(names, ","))
	if l.latest(keyDNS01) == key {
		return // ordered already, not observed yet
	}
	switch certificateAt(in, KeyCertificateWildcard) {
	case certificateUnknown:
		return
	case certificateAbsent:
		l.record(t.owner, key)
		return
	}
	cert := in.Observed[KeyCertificateWildcard]
	if cert == nil || slices.Equal(cert.DNSNames, names) {
		return // found by its probe (ours, not yet observed), or unchanged
	}
	byApex := map[string]string{}
	for _, c := range children {
		byApex[c.apex] = c.namespace
	}
	branches := changedBranches(t, byApex, children, domains(names), domains(cert.DNSNames))
	if len(branches) == 0 {
		branches[t.owner] = true // the same apexes, other names: the owner's
	}
	for _, b := range slices.Sorted(maps.Keys(branches)) {
		l.record(b, key)
	}
}

// changedBranches are the branches whose child apexes a change from have
// to want adds or removes. An idle zone leaves only when the name cap gives
// its place to a newcomer: that is the newcomer's order, and charging the
// idle zone's branch would let one tenant spend another's.
func changedBranches(t *tenancy, byApex map[string]string, children []*child, want, have map[string]bool) map[string]bool {
	idle := map[string]bool{}
	for _, c := range children {
		idle[c.apex] = c.state == v1alpha1.ChildApexIdle
	}
	branches := map[string]bool{}
	added := false
	for a := range want {
		if !have[a] {
			branches[branchOf(t, byApex, a)] = true
			added = true
		}
	}
	for a := range have {
		if !want[a] && (!idle[a] || !added) {
			branches[branchOf(t, byApex, a)] = true
		}
	}
	return branches
}

func branchOf(t *tenancy, byApex map[string]string, apex string) string {
	if ns, ok := byApex[apex]; ok {
		return t.branch(ns)
	}
	return t.branchOfApex(apex)
}
