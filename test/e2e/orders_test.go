//go:build e2e

package e2e

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/conditions"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// ordersIssuer is the issuer of testdata/platform-orders.yaml whose quota
// is 4 orders an hour, 2 for a branch alone; ordersApex is a registered
// domain of its own (an unlisted TLD: the apex is its own registered
// domain), so no other test's orders count against it.
const (
	ordersIssuer = "e2e-quota"
	ordersApex   = "orders.example"
	ordersNS     = "tenant-orders"
	// ordersLedgerNS is cert-manager's namespace in the platform settings.
	ordersLedgerNS = "cozy-cert-manager"
)

// ordersTenantGateway is a TenantGateway in http01 mode ordering from
// ordersIssuer; its ACME server is never reached (cert-manager does not
// watch this namespace): what the test judges is what the function
// composes.
const ordersTenantGateway = `
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata: {name: cozystack, namespace: ` + ordersNS + `}
spec:
  apex: ` + ordersApex + `
  gatewayClassName: cilium
  certMode: http01
  issuerName: ` + ordersIssuer + `
  acme: {server: "https://acme.orders.example/directory"}
`

// TestOrdersBoundedByTheDomainsLedger: the platform's quota for an issuer
// (4 orders an hour, half of it a branch's share alone) bounds the
// certificates a tenant's routes make the function order, counted in the
// ledger record provider-kubernetes writes in cert-manager's namespace. A tenant with three hostnames gets two
// Certificates and one hostname Waiting, named on the condition; deleting
// and re-creating its TenantGateway (what a tenant can do to its own, with
// gateway: false then true) does not give it a new quota: the record
// outlives the TenantGateway and the new one orders nothing.
func TestOrdersBoundedByTheDomainsLedger(t *testing.T) {
	t.Parallel()
	namespace(t, ordersNS, map[string]string{"namespace.cozystack.io/host": ordersApex, labelGateway: ordersNS})
	hosts := []string{"a." + ordersApex, "b." + ordersApex, "c." + ordersApex}
	for i, h := range hosts {
		apply(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app%d, namespace: %s}
spec:
  parentRefs: [{name: cozystack, namespace: %s}]
  hostnames: [%q]
`, i, ordersNS, ordersNS, h))
	}
	apply(t, ordersTenantGateway)

	states := func() map[v1alpha1.HostnameState]int {
		n := map[v1alpha1.HostnameState]int{}
		for _, h := range slice(tgw(t, ordersNS, "cozystack"), "status", "hostnames") {
			m, _ := h.(map[string]any)
			s, _ := m["state"].(string)
			n[v1alpha1.HostnameState(s)]++
		}
		return n
	}
	certificates := func() int { return len(list(t, gvkCertificate, ordersNS)) }
	eventually(t, 2*oneTTL+settle, "two hostnames Listening, one Waiting, ListenersReady False with CertificateOrdersWaiting, two Certificates", func() (bool, string) {
		s := states()
		_, reason, msg := condition(tgw(t, ordersNS, "cozystack"), string(conditions.ListenersReady))
		return s[v1alpha1.HostnameListening] == 2 && s[v1alpha1.HostnameWaiting] == 1 && reason == string(conditions.ReasonCertificateOrdersWaiting) && certificates() == 2,
			fmt.Sprintf("states %v, ListenersReady %s (%s), %d Certificates", s, reason, msg, certificates())
	})
	// records are the ledger's records of the TenantGateway, by uid.
	records := func() (map[string]acme.OrderRecord, string) {
		cms := &corev1.ConfigMapList{}
		if err := k8s.List(t.Context(), cms, client.InNamespace(ordersLedgerNS), client.MatchingLabels{gateway.LabelOrderLedger: gateway.LedgerLabel(ordersApex)}); err != nil {
			return nil, err.Error()
		}
		out, saw := map[string]acme.OrderRecord{}, []string{}
		for _, cm := range cms.Items {
			r, err := gateway.DecodeLedgerRecord(cm.Data)
			if err != nil {
				return nil, err.Error()
			}
			if r.TenantGateway == ordersNS+"/cozystack" && cm.Name == gateway.LedgerRecordName(ordersNS, "cozystack", r.UID) {
				out[r.UID] = r
			}
			saw = append(saw, cm.Name+": "+cm.Data["record"])
		}
		return out, fmt.Sprint(saw)
	}
	first := string(tgw(t, ordersNS, "cozystack").GetUID())
	eventually(t, oneTTL+settle, "the ledger's record in "+ordersLedgerNS+" holding the two orders", func() (bool, string) {
		r, saw := records()
		return len(r[first].Orders) == 2, saw
	})

	// The tenant deletes its TenantGateway and makes it again.
	remove(t, ordersTenantGateway)
	eventually(t, oneTTL+settle, "the TenantGateway and its Certificates gone", func() (bool, string) {
		_, found := get(t, gvkTenantGateway, ordersNS, "cozystack")
		return !found && certificates() == 0, fmt.Sprintf("TenantGateway found %v, %d Certificates", found, certificates())
	})
	if r, saw := records(); len(r[first].Orders) != 2 {
		t.Fatalf("the record did not outlive its TenantGateway with its two orders: %s", saw)
	}
	apply(t, ordersTenantGateway)
	eventually(t, 2*oneTTL+settle, "the new TenantGateway's three hostnames Waiting, no Certificate", func() (bool, string) {
		s := states()
		return s[v1alpha1.HostnameWaiting] == 3 && certificates() == 0, fmt.Sprintf("states %v, %d Certificates", s, certificates())
	})
	if r, saw := records(); len(r[first].Orders) != 2 || len(r[string(tgw(t, ordersNS, "cozystack").GetUID())].Orders) > 0 {
		t.Errorf("the ledger: want the first TenantGateway's two orders and none of the new one's; got %s", saw)
	}
}
