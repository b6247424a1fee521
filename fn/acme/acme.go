// Package acme is the vocabulary of ACME certificate orders that more than
// one package speaks: the CA's order quota with its defaults and bounds,
// which the Tenant computation reads from the platform settings and the
// TenantGateway computation enforces, and the order ledger's record as it is
// stored, which the edge observes and the TenantGateway computation reads
// and writes. The ledger's logic stays in fn/gateway; only what crosses
// packages is here, so that fn/tenant needs nothing of fn/gateway.
package acme

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OrderQuota is the CA's limit of orders per registered domain within
// Window, shared by the branches that ask; Limit 0 is no bound.
type OrderQuota struct {
	Limit  int
	Window time.Duration
}

// Bounded reports whether the quota bounds anything.
func (q OrderQuota) Bounded() bool { return q.Limit > 0 }

// OrderRecord is one TenantGateway's record of the ledger of its registered
// domain, as the ConfigMap carries it.
type OrderRecord struct {
	// RegisteredDomain is the domain the CA counts orders under.
	RegisteredDomain string `json:"registeredDomain"`
	// TenantGateway is the writer, <namespace>/<name>, and UID its uid: a
	// TenantGateway deleted and made again under the name has another, and
	// every order its predecessor left open is closed (what it composed
	// went with it).
	TenantGateway string `json:"tenantGateway"`
	UID           string `json:"uid,omitempty"`
	// Apex of the writer: a TenantGateway under another's apex charges
	// its orders to that one's branch (see the ledger in fn/gateway).
	Apex string `json:"apex"`
	// Orders of the window, oldest first.
	Orders []LedgerOrder `json:"orders,omitempty"`
	// Waiting maps branches to the orders they wait for on the writer,
	// and Asked is when the writer last said so: a writer that waits says
	// it again within every half window, so that the demand of a
	// TenantGateway deleted while it waited counts for one window at most.
	Waiting map[string]int `json:"waiting,omitempty"`
	Asked   *metav1.Time   `json:"asked,omitempty"`
	// Since is when the writer first wrote the record: within a branch,
	// an older record's demand comes before a younger one's (see the
	// ledger in fn/gateway).
	Since *metav1.Time `json:"since,omitempty"`
	// Alive is when the writer last said it is alive: it says so again
	// within every half window, so that a record whose writer is gone is
	// told from one whose writer orders nothing now (only the first is
	// ever removed by another run).
	Alive *metav1.Time `json:"alive,omitempty"`
}

// LedgerOrder is one certificate order: one issuance cert-manager makes
// because the function composed a Certificate anew or changed its names.
type LedgerOrder struct {
	// Branches charged: the branch that asked (several when one change of
	// the dns01 certificate adds several branches' zones; it is still one
	// order of the registered domain).
	Branches []string `json:"branches"`
	// Certificate is the composition resource name of the Certificate.
	Certificate string `json:"certificate"`
	// Names is the SHA-256 of the Certificate's names, in full.
	Names string `json:"names"`
	// DNSNames are the names themselves, kept only on the latest order of
	// the dns01 certificate: while it is open they are what the last run
	// composed, whatever Crossplane has observed of it so far.
	DNSNames []string `json:"dnsNames,omitempty"`
	// At is when the function composed it.
	At metav1.Time `json:"at"`
	// Seq numbers the record's orders in the order they were made: two
	// orders of one Certificate and names within one second stay two.
	Seq int `json:"seq"`
	// Closed: a later run composed the Certificate no more, or with other
	// names, so composing these names again is a new order. While it is
	// open the order stands for the Certificate as composed, applied or
	// not (an apply that fails orders nothing twice).
	Closed bool `json:"closed,omitempty"`
}

// Writer identifies a record's writer: its TenantGateway and uid.
func (r *OrderRecord) Writer() string { return r.TenantGateway + "/" + r.UID }

// Empty reports whether the record holds neither orders nor demand.
func (r *OrderRecord) Empty() bool { return len(r.Orders) == 0 && len(r.Waiting) == 0 }

// QuotaSettingPath names the platform setting of the order quotas, by
// issuer name, for messages.
const QuotaSettingPath = "gateway.certificateOrders"

// MaxOrderQuota is the largest quota a platform may set: one record holds
// at most that many orders.
const MaxOrderQuota = 1000

// LetsEncryptQuota is Let's Encrypt's published limit of new certificates
// per registered domain, the default for issuers named letsencrypt-*.
var LetsEncryptQuota = OrderQuota{Limit: 50, Window: 7 * 24 * time.Hour}

// LetsEncryptIssuerPrefix begins the issuer names whose quota defaults to
// LetsEncryptQuota.
const LetsEncryptIssuerPrefix = "letsencrypt-"
