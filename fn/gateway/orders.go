package gateway

import (
	"cmp"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// The ACME order ledger (see "Certificate orders" in docs/design.md): an
// ACME CA limits the certificates it issues per registered domain per
// window, and every TenantGateway under that domain shares the limit. Each
// TenantGateway keeps its part of the ledger in a record of its own (a
// ConfigMap in the platform's namespace, written through an Object with
// deletion policy Orphan) and reads every record of its registered domain:
// the ledger is their union, which no TenantGateway's deletion, re-creation,
// class or status resets.

const (
	// maxOrders bounds one record's orders: no quota a platform may set
	// lets one TenantGateway order more within a window.
	maxOrders = acme.MaxOrderQuota
	// maxWaitingBranches bounds one record's waiting demand.
	maxWaitingBranches = 64
	// maxReaps bounds the other records one run removes.
	maxReaps = 8
)

// RegisteredDomain is the domain an ACME CA counts apex's certificates
// under: the public suffix plus one label (Let's Encrypt uses the Public
// Suffix List, its private entries included), or apex itself when it is a
// public suffix.
func RegisteredDomain(apex string) string {
	d, err := publicsuffix.EffectiveTLDPlusOne(strings.ToLower(apex))
	if err != nil {
		return strings.ToLower(apex)
	}
	return d
}

// fullHash is the whole SHA-256 of s in lowercase base32 without padding:
// 52 characters, short enough for a label value and an object name.
func fullHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:]))
}

// LedgerLabel is the label value every record of the registered domain of
// apex carries: its full hash (a label value holds at most 63 characters,
// so not the domain itself).
func LedgerLabel(apex string) string { return fullHash(RegisteredDomain(apex)) }

// LedgerRecordName is the ConfigMap of the record of the TenantGateway
// ns/name of uid: a full hash of its identity, uid included, so that a
// TenantGateway re-created under the name writes a record of its own and
// no run ever removes, as its predecessor's, a record a live TenantGateway
// writes.
func LedgerRecordName(ns, name, uid string) string {
	return "tenant-gateway-orders-" + fullHash(ns+"/"+name+"/"+uid)
}

// namesHash keys a Certificate's names: the full SHA-256 of the sorted
// names, never a prefix.
func namesHash(names []string) string {
	s := slices.Clone(names)
	slices.Sort(s)
	sum := sha256.Sum256([]byte(strings.Join(s, "\n")))
	return hex.EncodeToString(sum[:])
}

// A ledger is the union of the records of the registered domain as this run
// reads them, the orders this run adds, and the fair share of the quota
// among the branches that ask.
type ledger struct {
	now   time.Time
	quota acme.OrderQuota
	// self is this TenantGateway's record; top is the apex its branches
	// are named under.
	self *acme.OrderRecord
	top  string
	// others are the other records' orders of the window.
	others []acme.LedgerOrder
	// waiting is the other records' waiting demand by branch.
	waiting map[string]int
	// demand is each other record's demand (orders of the window and
	// waiting) by writer, then branch, and usedBy its orders of the window
	// alone: a branch's share goes to its records oldest first (part).
	demand, usedBy map[string]map[string]int
	// since is each other record's Since, by writer; apexes its writer's
	// apex, which names the branches it may order for (memberOf); asks
	// its waiting demand as said within the window, by branch.
	since  map[string]time.Time
	apexes map[string]string
	asks   map[string]map[string]int
	// wants is this run's demand by branch, granted what it may order.
	wants, granted map[string]int
	// share is each branch's fair share; nil until settled.
	share map[string]int
	// even is each branch's even part as this run read the ledger, before
	// any of its own grants (see part).
	even map[string]int
	// written is the own record as the ConfigMap holds it, applied as the
	// record's observed Object last wrote it (nil when there is none).
	written, applied *acme.OrderRecord
	// confirmed: the ConfigMap holds every order the record's Object was
	// last applied with, so this run reads all its orders; only then does
	// it grant new ones.
	confirmed bool
	// stale are other records that count for nothing (no order of the
	// window, no demand said within it), at most maxReaps, by writer: a
	// TenantGateway deleted while it held orders left them, and this run
	// removes them.
	stale []acme.OrderRecord
	// recordName is the own record's ConfigMap, for messages.
	recordName string
	// unknown: a Certificate's probe is not answered yet, so this call may
	// order once it is; the record is composed all the same, so that its
	// own probe is asked in the same call.
	unknown bool
}

// newLedger reads the records of the registered domain: its own (the
// ConfigMap's and its Object's, merged, since provider-kubernetes writes
// the ConfigMap some time after Crossplane applies the Object) and the
// others', keeping the orders of the window.
func newLedger(in *Input) *ledger {
	l := &ledger{
		now: in.Now.UTC().Truncate(time.Second), quota: in.Quota, top: ledgerTop(in),
		self:    &acme.OrderRecord{RegisteredDomain: RegisteredDomain(in.Spec.Apex), TenantGateway: in.Namespace + "/" + in.Name, UID: in.UID, Apex: in.Spec.Apex},
		waiting: map[string]int{}, demand: map[string]map[string]int{}, usedBy: map[string]map[string]int{}, since: map[string]time.Time{},
		apexes: map[string]string{}, asks: map[string]map[string]int{},
		wants: map[string]int{}, granted: map[string]int{},
	}
	for i, r := range in.Ledger {
		if r.RegisteredDomain != l.self.RegisteredDomain {
			continue // another domain's record under a colliding label: never ours
		}
		if r.Writer() == l.self.Writer() {
			l.written = &in.Ledger[i]
			continue
		}
		l.readOther(r)
	}
	slices.SortFunc(l.stale, func(a, b acme.OrderRecord) int { return strings.Compare(a.Writer(), b.Writer()) })
	l.stale = l.stale[:min(len(l.stale), maxReaps)]
	if o := in.Observed[KeyOrderLedger]; o != nil {
		l.applied = o.Record
	}
	l.recordName = in.LedgerNamespace + "/" + LedgerRecordName(in.Namespace, in.Name, in.UID)
	l.self.Orders = l.ownOrders(in.UID)
	l.confirmed = l.applied != nil && l.written != nil && l.written.UID == in.UID && holds(l.written.Orders, l.applied.Orders)
	return l
}

// readOther adds another TenantGateway's record: its orders of the window
// and the demand it said within it. It is stale when it has neither and
// its writer has not said it is alive within a window: only then is its
// writer surely gone, so that removing it loses no order a live writer
// makes next.
func (l *ledger) readOther(r acme.OrderRecord) {
	demand, used := map[string]int{}, map[string]int{}
	for _, o := range r.Orders {
		if l.inWindow(o) {
			l.others = append(l.others, o)
			for _, b := range o.Branches {
				demand[b]++
				used[b]++
			}
		}
	}
	if l.asking(r) {
		for b, n := range r.Waiting {
			l.waiting[b] += n
			demand[b] += n
		}
	}
	w := r.Writer()
	l.demand[w], l.usedBy[w], l.apexes[w] = demand, used, strings.ToLower(r.Apex)
	if l.asking(r) {
		l.asks[w] = r.Waiting
	}
	if r.Since != nil {
		l.since[w] = r.Since.Time
	}
	if len(demand) == 0 && !l.asking(r) && (r.Alive == nil || !r.Alive.Add(l.quota.Window).After(l.now)) {
		l.stale = append(l.stale, r)
	}
}

// ownOrders merges the own record's orders of the window as the ConfigMap
// and the Object hold them, by identity, oldest first: an order either
// holds is kept, closed when either closed it. Orders of a predecessor
// under the name (another uid) are closed.
func (l *ledger) ownOrders(uid string) []acme.LedgerOrder {
	byID := map[orderID]acme.LedgerOrder{}
	for _, r := range []*acme.OrderRecord{l.written, l.applied} {
		if r == nil {
			continue
		}
		for _, o := range r.Orders {
			if !l.inWindow(o) {
				continue
			}
			o.Closed = o.Closed || r.UID != uid || byID[idOf(o)].Closed
			byID[idOf(o)] = o
		}
	}
	out := slices.Collect(maps.Values(byID))
	slices.SortFunc(out, func(a, b acme.LedgerOrder) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), a.At.Compare(b.At.Time), strings.Compare(a.Certificate, b.Certificate), strings.Compare(a.Names, b.Names))
	})
	return out
}

// orderID identifies an order across the copies of a record.
type orderID struct {
	certificate, names string
	seq                int
}

func idOf(o acme.LedgerOrder) orderID { return orderID{o.Certificate, o.Names, o.Seq} }

// holds reports whether have holds every order of want.
func holds(have, want []acme.LedgerOrder) bool {
	ids := make(map[orderID]bool, len(have))
	for _, o := range have {
		ids[idOf(o)] = true
	}
	for _, o := range want {
		if !ids[idOf(o)] {
			return false
		}
	}
	return true
}

// inWindow reports whether o counts: it entered the window and has not left
// it. An order dated after the run's clock (a replica ahead) counts.
func (l *ledger) inWindow(o acme.LedgerOrder) bool {
	return o.At.Add(l.quota.Window).After(l.now)
}

// ledgerTop is the apex the branches of the whole registered domain are
// named under, from the names alone: the platform's apex when the
// TenantGateway's is at or under it, else the registered domain. Never from
// which records exist, so that a Gateway that has ordered nothing yet still
// names the branches every other one does.
func ledgerTop(in *Input) string {
	apex, top := strings.ToLower(in.Spec.Apex), strings.ToLower(in.PlatformApex)
	if top == "" || apex != top && !strings.HasSuffix(apex, "."+top) {
		top = RegisteredDomain(apex)
	}
	if apex != top && !strings.HasSuffix(apex, "."+top) {
		return apex // a public suffix: nothing above it to share
	}
	return top
}

// asking reports whether r's waiting demand counts: its writer said so
// within the window.
func (l *ledger) asking(r acme.OrderRecord) bool {
	return r.Asked != nil && r.Asked.Add(l.quota.Window).After(l.now)
}

// branch names the branch of the whole registered domain that local (a
// branch of this Gateway's delegation tree) belongs to: under another
// TenantGateway's apex, every order of this one is the branch of that
// apex's tree its own apex is in. So a tenant cannot make more branches by
// owning a Gateway of its own.
func (l *ledger) branch(local string) string {
	if l.top == l.self.Apex {
		return local
	}
	return l.apexBranch(l.self.Apex)
}

// apexBranch is the branch of the whole registered domain an apex under
// the top is in: the top with the apex's label one below it.
func (l *ledger) apexBranch(apex string) string {
	rest := strings.TrimSuffix(apex, "."+l.top)
	return rest[strings.LastIndexByte(rest, '.')+1:] + "." + l.top
}

// want adds n orders to branch's demand of this run.
func (l *ledger) want(branch string, n int) { l.wants[branch] += n }

// used is the orders of the window charged to branch, and in all.
func (l *ledger) used(branch string) int {
	return chargedTo(slices.Concat(l.others, l.self.Orders), branch)
}

// chargedTo counts the orders charged to branch.
func chargedTo(orders []acme.LedgerOrder, branch string) int {
	n := 0
	for _, o := range orders {
		if slices.Contains(o.Branches, branch) {
			n++
		}
	}
	return n
}

func (l *ledger) total() int { return len(l.others) + len(l.self.Orders) }

// settle computes the fair share once this run's demand is known: max-min
// over every branch's demand (its orders of the window, what it waits for
// on other Gateways, what it asks for here) and one more branch that has
// not asked yet, whose share stays free so that a newcomer always finds
// one.
func (l *ledger) settle() {
	if l.share != nil {
		return
	}
	demand := l.branchDemand()
	l.share = maxMin(l.quota.Limit, demand)
}

// branchDemand is every branch's demand as this run knows it: its orders of
// the window, what it waits for on other Gateways, what it asks for here;
// and the newcomer's, the whole quota.
func (l *ledger) branchDemand() map[string]int {
	demand := map[string]int{}
	for _, o := range slices.Concat(l.others, l.self.Orders) {
		for _, b := range o.Branches {
			demand[b]++
		}
	}
	for b, n := range l.waiting {
		demand[b] += n
	}
	for b, n := range l.wants {
		demand[b] += n
	}
	const newcomer = "" // no branch is named ""
	demand[newcomer] = l.quota.Limit
	return demand
}

// maxMin shares capacity among demands by water-filling: the smallest
// demands are met whole, the rest share what is left equally (a remainder
// goes one each, in name order).
func maxMin(capacity int, demand map[string]int) map[string]int {
	names := slices.SortedFunc(maps.Keys(demand), func(a, b string) int {
		return cmp.Or(cmp.Compare(demand[a], demand[b]), strings.Compare(a, b))
	})
	share := make(map[string]int, len(names))
	left := capacity
	for i, b := range names {
		each := left / (len(names) - i)
		give := min(demand[b], each)
		share[b] = give
		left -= give
	}
	for _, b := range slices.Sorted(maps.Keys(share)) {
		if left == 0 {
			break
		}
		if share[b] < demand[b] {
			share[b]++
			left--
		}
	}
	return share
}

// take grants branch one order if its fair share and the registered
// domain's quota leave one; free reports it takes nothing of the quota (one
// change of the dns01 certificate is one order, whichever branches it
// serves). The caller records what it took.
func (l *ledger) take(branch string, free bool) bool {
	if !l.quota.Bounded() {
		return true
	}
	if !l.confirmed {
		return false
	}
	l.settle()
	if l.used(branch)+l.granted[branch] >= l.share[branch] || l.ownUsed(branch)+l.granted[branch] >= l.part(branch) || !free && l.total() >= l.quota.Limit {
		return false
	}
	l.granted[branch]++
	return true
}

// part is this record's part of branch's share: what is left of it once
// every older record (by Since, then writer) has what it asks for (its
// orders of the window and what it waits for) and every younger one what
// it has ordered. A Gateway made later than another of its branch finds
// that one's record, written before it could order, so Gateways of one
// branch made one after another cannot each spend the share while their
// orders are still unwritten.
//
// Nor may it take more than its even part of what the branch has left as
// read, split among every record that may order for the branch, asking or
// not: Gateways of a branch that all raise their demand at once read no
// demand of each other's, and together take no more than is left. The
// remainder goes to the oldest of them that said it waits for the branch,
// else to the oldest, so that a branch of many Gateways is never stuck
// with orders left and an older Gateway waiting.
func (l *ledger) part(branch string) int {
	left := l.share[branch]
	me, mine := l.selfSince(), l.self.Writer()
	members := []string{mine}
	for w, d := range l.demand {
		if d[branch] == 0 && !l.memberOf(l.apexes[w], branch) {
			continue
		}
		members = append(members, w)
		if l.older(w, mine, me) {
			left -= d[branch]
		} else {
			left -= l.usedBy[w][branch]
		}
	}
	if l.even == nil {
		l.even = map[string]int{}
	}
	even, read := l.even[branch]
	if !read {
		rest := max(0, l.capacity(branch)-l.used(branch))
		even = l.ownUsed(branch) + rest/len(members) + l.remainderOf(branch, members, me, rest%len(members))
		l.even[branch] = even
	}
	return max(0, min(left, even))
}

// sinceOf is when writer w's record was first written (self's: me); a
// record that does not say is the youngest.
func (l *ledger) sinceOf(w, mine string, me time.Time) time.Time {
	if w == mine {
		return me
	}
	if s, ok := l.since[w]; ok {
		return s
	}
	return time.Unix(1<<40, 0)
}

// byAge orders writers' records oldest first (by Since, then writer).
func (l *ledger) byAge(a, b, mine string, me time.Time) int {
	return cmp.Or(l.sinceOf(a, mine, me).Compare(l.sinceOf(b, mine, me)), strings.Compare(a, b))
}

// older reports whether writer w's record is older than the own one.
func (l *ledger) older(w, mine string, me time.Time) bool { return l.byAge(w, mine, mine, me) < 0 }

// remainderOf is the own record's part of the remainder of branch's even
// split: one order each to the members that said they wait for the
// branch, oldest first, then what is left to the oldest member. So a
// record that waits but will never order again (its Gateway deleted while
// it waited) holds back one order at most.
func (l *ledger) remainderOf(branch string, members []string, me time.Time, remainder int) int {
	mine := l.self.Writer()
	asks := func(w string) bool {
		if w == mine {
			return l.written != nil && l.written.UID == l.self.UID && l.asking(*l.written) && l.written.Waiting[branch] > 0
		}
		return l.asks[w][branch] > 0
	}
	sorted := slices.Clone(members)
	slices.SortFunc(sorted, func(a, b string) int { return l.byAge(a, b, mine, me) })
	got := 0
	for _, w := range sorted {
		if remainder > 0 && asks(w) {
			remainder--
			if w == mine {
				got++
			}
		}
	}
	if remainder > 0 && sorted[0] == mine {
		got += remainder
	}
	return got
}

// memberOf reports whether a Gateway of apex may order for branch: one at
// the top of the domain's tree for every branch, one under it for the
// branch its apex is in, one outside it (its branches are named under
// another top) only for what it asks.
func (l *ledger) memberOf(apex, branch string) bool {
	if apex == l.top {
		return true
	}
	if !strings.HasSuffix(apex, "."+l.top) {
		return false
	}
	return l.apexBranch(apex) == branch
}

// capacity is the share branch would get asking for the whole quota: what
// the even part divides, so that a branch's unmet demand split among its
// records never rounds down to nothing.
func (l *ledger) capacity(branch string) int {
	demand := l.branchDemand()
	demand[branch] = l.quota.Limit
	return maxMin(l.quota.Limit, demand)[branch]
}

// selfSince is when the own record was first written: as the ConfigMap or
// the Object holds it, else now (a record about to be written first).
func (l *ledger) selfSince() time.Time {
	for _, r := range []*acme.OrderRecord{l.written, l.applied} {
		if r != nil && r.UID == l.self.UID && r.Since != nil {
			return r.Since.Time
		}
	}
	return l.now
}

// ownUsed is the orders of the window of the own record charged to branch.
func (l *ledger) ownUsed(branch string) int { return chargedTo(l.self.Orders, branch) }

// record charges branches with an order of certificate for names.
func (l *ledger) record(certificate string, names []string, branches ...string) {
	for _, b := range branches {
		l.granted[b]--
		l.wants[b]--
	}
	seq := 0
	for _, r := range []*acme.OrderRecord{l.self, l.written, l.applied} {
		for _, o := range ordersOf(r) {
			seq = max(seq, o.Seq)
		}
	}
	o := acme.LedgerOrder{Branches: branches, Certificate: certificate, Names: namesHash(names), At: metav1.NewTime(l.now), Seq: seq + 1}
	if certificate == KeyCertificateWildcard {
		for i := range l.self.Orders {
			l.self.Orders[i].DNSNames = nil
		}
		o.DNSNames = slices.Clone(names)
	}
	l.self.Orders = append(l.self.Orders, o)
}

// ordersOf are r's orders (none when r is nil).
func ordersOf(r *acme.OrderRecord) []acme.LedgerOrder {
	if r == nil {
		return nil
	}
	return r.Orders
}

// composedWildcard is the dns01 certificate's names as the last run
// composed them: its latest order's while that is open, else observed.
func (l *ledger) composedWildcard(observed []string) []string {
	for i := len(l.self.Orders) - 1; i >= 0; i-- {
		if o := l.self.Orders[i]; o.Certificate == KeyCertificateWildcard {
			if !o.Closed && o.DNSNames != nil && namesHash(o.DNSNames) == o.Names {
				return o.DNSNames
			}
			break
		}
	}
	return observed
}

// pending reports whether certificate's latest order is of names and
// still open: the same order, composed by an earlier run.
func (l *ledger) pending(certificate string, names []string) bool {
	h := namesHash(names)
	for i := len(l.self.Orders) - 1; i >= 0; i-- {
		if o := l.self.Orders[i]; o.Certificate == certificate && o.Names == h {
			return !o.Closed
		}
	}
	return false
}

// close closes the open orders of Certificates this run does not compose
// with their names (composed maps composition resource names to the names'
// hash). It changes the record only in a run that changes the Certificates
// anyway, so a run that composes what the last one did writes nothing new.
func (l *ledger) close(composed map[string]string) {
	for i := range l.self.Orders {
		if o := &l.self.Orders[i]; !o.Closed && composed[o.Certificate] != o.Names {
			o.Closed = true
		}
	}
}

// waitMessage says why a change waits and until when.
func (l *ledger) waitMessage(branch, what string) string {
	if !l.confirmed {
		return fmt.Sprintf("%s waits for a certificate order: no order is made before this TenantGateway's record of the orders for %s (ConfigMap %s) holds it and what it waits for, so that none goes unrecorded and every Gateway of the branch reads the demand first",
			what, l.self.RegisteredDomain, l.recordName)
	}
	return fmt.Sprintf("%s waits for a certificate order: the ACME CA issues at most %d certificates for %s in %s, shared fairly by the branches that ask; branch %s has ordered %d of its share of %d; it may order again after %s",
		what, l.quota.Limit, l.self.RegisteredDomain, l.quota.Window, branch, l.used(branch), l.share[branch], l.until(branch).UTC().Format(time.RFC3339))
}

// until is when branch may order again at the latest: its oldest order of
// the window leaves it, or, when the quota is what binds, the registered
// domain's oldest.
func (l *ledger) until(branch string) time.Time {
	all := slices.Concat(l.others, l.self.Orders)
	slices.SortStableFunc(all, func(a, b acme.LedgerOrder) int { return a.At.Compare(b.At.Time) })
	for _, o := range all {
		if slices.Contains(o.Branches, branch) {
			return o.At.Add(l.quota.Window)
		}
	}
	if len(all) > 0 {
		return all[0].At.Add(l.quota.Window)
	}
	return l.now
}

// Record is the record to write: nil when there is nothing to keep and no
// record to empty. An empty record is written once, with a deletion
// policy that lets its Object delete the ConfigMap, and dropped once that
// is applied.
func (l *ledger) Record() *acme.OrderRecord {
	if !l.quota.Bounded() {
		return nil
	}
	r := *l.self
	if len(r.Orders) > maxOrders {
		r.Orders = r.Orders[len(r.Orders)-maxOrders:]
	}
	r.Waiting, r.Asked = l.stillWaiting(), nil
	if len(r.Waiting) > 0 {
		r.Asked = l.asked(r.Waiting)
	}
	since := metav1.NewTime(l.selfSince())
	r.Since, r.Alive = &since, l.alive()
	if !r.Empty() || l.unknown || l.applied != nil && !l.applied.Empty() || l.applied == nil && l.written != nil && !l.written.Empty() {
		return &r
	}
	return nil
}

// stillWaiting is this run's demand not granted, by branch, at most
// maxWaitingBranches in name order (nil when none).
func (l *ledger) stillWaiting() map[string]int {
	var out map[string]int
	for _, b := range slices.Sorted(maps.Keys(l.wants)) {
		if n := l.wants[b] - l.granted[b]; n > 0 && len(out) < maxWaitingBranches {
			if out == nil {
				out = map[string]int{}
			}
			out[b] = n
		}
	}
	return out
}

// asked is when a record waiting for waiting says so: when the last record
// applied said the same less than half a window ago, then, so that a record
// that keeps waiting is written again only twice a window.
func (l *ledger) asked(waiting map[string]int) *metav1.Time {
	if p := l.applied; p != nil && p.Asked != nil && maps.Equal(p.Waiting, waiting) && p.Asked.Add(l.quota.Window/2).After(l.now) {
		return p.Asked
	}
	now := metav1.NewTime(l.now)
	return &now
}

// alive is when the record says its writer is alive: as the record last
// applied said, while that is less than half a window ago, else now; so a
// live writer's record is written again only twice a window for it.
func (l *ledger) alive() *metav1.Time {
	if p := l.applied; p != nil && p.UID == l.self.UID && p.Alive != nil && p.Alive.Add(l.quota.Window/2).After(l.now) {
		return p.Alive
	}
	now := metav1.NewTime(l.now)
	return &now
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
// their branches and holds back those whose branch may not order: they lose
// their listener this run and their claims wait. A Certificate is no new
// order when Crossplane observes it with the very names composed, or when
// an earlier run ordered it with these names and every run since composed
// it (an open order of the own record): so an order is counted once, even
// before Crossplane observes what it applied, while a Certificate whose
// names change (another hostname under one listener name), one found by
// its probe but not observed, and a hostname dropped and asked for again
// are new orders, whatever the Gateway's mode was in between. It returns
// the held slots, whose Certificates stay probed so that the decision
// holds.
func orderHTTP01(in *Input, t *tenancy, l *ledger, slots []*slot) []*slot {
	var news []*slot
	for _, s := range slots {
		key, names := CertificateKey(s.name), []string{s.hostname}
		if !s.kept {
			continue
		}
		if o := in.Observed[key]; o != nil && slices.Equal(o.DNSNames, names) {
			continue
		}
		if _, ok := in.Probes[key]; !ok && in.Observed[key] == nil {
			// Crossplane calls the function again with the probe
			// answered before it applies anything: no decision yet.
			l.unknown = true
			continue
		}
		if l.pending(key, names) {
			continue
		}
		news = append(news, s)
		l.want(l.branch(t.branch(s.namespace)), 1)
	}
	var held []*slot
	for _, s := range news {
		b := l.branch(t.branch(s.namespace))
		if !l.take(b, false) {
			s.kept, s.waiting, s.recording = false, l.waitMessage(b, s.hostname), !l.confirmed
			held = append(held, s)
			continue
		}
		l.record(CertificateKey(s.name), []string{s.hostname}, b)
	}
	return held
}

// orderDNS01 decides the dns01 certificate's names, after the name cap. A
// child apex new to the certificate is an order of its branch: one that may
// not order waits (no names, no listener). Names leave for free: a change
// that only removes names is no order at all, so the names of gone or idle
// zones stay on the certificate until the next order, which drops them; the
// name cap never keeps a place for them. So giving names up never waits for
// the budget, and no removed zone keeps a newcomer out. The first
// certificate is the owner's order.
func orderDNS01(in *Input, t *tenancy, l *ledger, children []*child) []string {
	cert := in.Observed[KeyCertificateWildcard]
	if cert == nil {
		return orderFirstDNS01(in, t, l, children)
	}
	// The certificate as the last run composed it: Crossplane may not have
	// observed that yet, and a zone it added must neither be charged
	// again nor taken off.
	last := l.composedWildcard(cert.DNSNames)
	have := domains(last)
	adding := map[string][]*child{}
	for _, c := range children {
		if c.state == v1alpha1.ChildApexListening && !have[c.apex] {
			b := l.branch(t.branch(c.namespace))
			adding[b] = append(adding[b], c)
		}
	}
	branches := slices.Sorted(maps.Keys(adding))
	for _, b := range branches {
		l.want(b, 1)
	}
	var charged []string
	for _, b := range branches {
		if l.take(b, len(charged) > 0) {
			charged = append(charged, b)
			continue
		}
		for _, c := range adding[b] {
			c.state, c.message = v1alpha1.ChildApexWaiting, l.waitMessage(b, "adding "+c.apex+" to the wildcard certificate")
		}
	}
	names := childNames(in, children)
	if len(charged) == 0 {
		// Nothing added: names only leave, which waits for the next order.
		return lingering(last, names)
	}
	if !l.pending(KeyCertificateWildcard, names) {
		l.record(KeyCertificateWildcard, names, charged...)
	}
	return names
}

// orderFirstDNS01 decides the names of a dns01 certificate Crossplane has
// not observed: the first, the owner's order with every zone, unless it is
// ours already (found by its probe, or an open order) or not looked up yet.
func orderFirstDNS01(in *Input, t *tenancy, l *ledger, children []*child) []string {
	names := childNames(in, children)
	state := certificateAt(in, KeyCertificateWildcard)
	l.unknown = state == certificateUnknown
	if state != certificateAbsent || l.pending(KeyCertificateWildcard, names) {
		return names // ours but not observed yet, or not looked up yet
	}
	owner := l.branch(t.owner)
	l.want(owner, 1)
	if l.take(owner, false) {
		l.record(KeyCertificateWildcard, names, owner)
		return names
	}
	for _, c := range children {
		if c.state == v1alpha1.ChildApexListening {
			c.state, c.message = v1alpha1.ChildApexWaiting, l.waitMessage(owner, "adding "+c.apex+" to the wildcard certificate")
		}
	}
	return nil
}

// lingering are the certificate's names when nothing is added: the
// observed ones, while they still cover every name wanted (else wanted, by
// the same rule as ever: a change that adds is an order).
func lingering(observed, wanted []string) []string {
	have := domains(observed)
	for d := range domains(wanted) {
		if !have[d] {
			return wanted
		}
	}
	if len(observed) > maxCertificateDNSNames {
		return wanted
	}
	return observed
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

// KeyOrderLedger is the composition resource name of the Object that writes
// the TenantGateway's record of the order ledger.
const KeyOrderLedger = "order-ledger"

// LabelOrderLedger marks every record of the order ledger with the full hash
// of its registered domain (LedgerLabel), which every TenantGateway of that
// domain selects.
const LabelOrderLedger = "cozystack.io/order-ledger"

// keyLedgerRecord is the ConfigMap's data key holding the record as JSON.
const keyLedgerRecord = "record"

// LedgerObjectName is the Object, in the owner's namespace, that writes the
// record.
func LedgerObjectName(tgw string) string { return tgw + "-order-ledger" }

// ledgerRecordResource is the Object that writes record into the ledger's
// namespace. While the record holds orders its management policies leave
// out Delete (a namespaced managed resource's way to orphan), so that
// deleting or re-creating the TenantGateway, or a tenant deleting the
// Object, keeps what it ordered; an empty record goes with its Object.
func ledgerRecordResource(in *Input, record *acme.OrderRecord) (kube.Resource, error) {
	manifest, err := ledgerConfigMap(in.LedgerNamespace, LedgerRecordName(in.Namespace, in.Name, in.UID), record)
	if err != nil {
		return kube.Resource{}, err
	}
	obj := writerObject(in, LedgerObjectName(in.Name), manifest)
	if len(record.Orders) > 0 {
		obj.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize}
	}
	return kube.Resource{Key: KeyOrderLedger, Object: obj}, nil
}

// KeyOrderLedgerReapPrefix begins the composition resource names of the
// Objects that remove other TenantGateways' stale records.
const KeyOrderLedgerReapPrefix = "order-ledger-reap-"

// ledgerReapers are the Objects that remove the stale records of the
// registered domain: each writes its record emptied (so that it counts for
// nothing whatever happens next) with the default deletion policy, and is
// composed until Crossplane observes it; the next run drops it, and
// provider-kubernetes deletes the ConfigMap with it.
func ledgerReapers(in *Input, l *ledger) ([]kube.Resource, error) {
	var out []kube.Resource
	for _, r := range l.stale {
		id := fullHash(r.Writer())
		key := KeyOrderLedgerReapPrefix + id
		if _, applied := in.Observed[key]; applied {
			continue
		}
		ns, name, _ := strings.Cut(r.TenantGateway, "/")
		cm, err := ledgerConfigMap(in.LedgerNamespace, LedgerRecordName(ns, name, r.UID), &acme.OrderRecord{RegisteredDomain: r.RegisteredDomain, TenantGateway: r.TenantGateway, UID: r.UID, Apex: r.Apex})
		if err != nil {
			return nil, err
		}
		out = append(out, kube.Resource{Key: key, Object: writerObject(in, LedgerObjectName(in.Name)+"-reap-"+id, cm)})
	}
	return out, nil
}

// ledgerConfigMap is the manifest of the ConfigMap ns/name holding record.
func ledgerConfigMap(ns, name string, record *acme.OrderRecord) (runtime.RawExtension, error) {
	data, err := json.Marshal(record)
	if err != nil {
		return runtime.RawExtension{}, fmt.Errorf("cannot encode the order ledger's record: %w", err)
	}
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: corev1.SchemeGroupVersion.String(), Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: ns,
			Labels:    map[string]string{kube.LabelManagedBy: kube.ManagedBy, LabelOrderLedger: fullHash(record.RegisteredDomain)},
		},
		Data: map[string]string{keyLedgerRecord: string(data)},
	}
	manifest, err := jsonobj.Manifest(cm)
	if err != nil {
		return runtime.RawExtension{}, fmt.Errorf("cannot encode the order ledger's record: %w", err)
	}
	return manifest, nil
}

// DecodeLedgerRecord reads a record from its ConfigMap's data.
func DecodeLedgerRecord(data map[string]string) (acme.OrderRecord, error) {
	var r acme.OrderRecord
	if err := json.Unmarshal([]byte(data[keyLedgerRecord]), &r); err != nil {
		return r, fmt.Errorf("cannot decode the order ledger's record (data key %q): %w", keyLedgerRecord, err)
	}
	return r, nil
}
