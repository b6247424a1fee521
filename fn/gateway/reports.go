package gateway

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kobjv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/object/v1alpha1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// Route reports tell a tenant, in its own namespace, why its routes are not
// served (see Route reports in docs/design.md): the causes are on the
// owner's TenantGateway, which a tenant of another namespace cannot read.
// Each is a ConfigMap in that namespace, written by provider-kubernetes
// through an Object in the owner's namespace, holding only that
// namespace's routes.

// MaxRouteReports bounds the namespaces reported on: each report is one
// composed Object, and a tenant can make nested tenants.
const MaxRouteReports = 64

// maxReportBytes bounds one report's data (a ConfigMap holds up to 1 MiB;
// the Object that carries it is a composed resource, in the function's
// response).
const maxReportBytes = 16 << 10

// maxReportsBytes bounds the data of all reports of a TenantGateway
// together: 64 reports of 16 KiB would make the function's response pass
// 1 MiB (see Bounds in docs/design.md). With many reports each gets its
// share.
const maxReportsBytes = 256 << 10

// KeyReportSummary is the report's key that says whose report it is and
// what it leaves out; every other key is a route, "<kind>.<name>".
const KeyReportSummary = "summary"

const keyReportPrefix = "report-"

// ReportKey is the composition resource name of a namespace's report.
func ReportKey(ns string) string { return keyReportPrefix + ns }

func isReportKey(key string) bool { return strings.HasPrefix(key, keyReportPrefix) }

// ReportName is the ConfigMap a namespace's report is: <tgw>-route-status,
// one per TenantGateway in every namespace it reports on.
func ReportName(tgw string) string { return tgw + "-route-status" }

// ReportObjectName is the Object that writes a namespace's report, in the
// owner's namespace: <tgw>-rs-<ns>-<hex8 of tgw/ns>, or <hex16>-route-status
// over the limit of an object name (as NamespaceObjectName).
func ReportObjectName(tgw, ns string) string { return writerName(tgw, ns, "rs", "route-status") }

// A report is one namespace's routes with a hostname not served, and each
// route's hostnames in status order.
type report struct {
	namespace string
	// routes are the keys "<kind>.<name>" of the namespace's routes, in
	// claim order; claims their hostnames' claims, whose lines are written
	// only for the routes a kept report shows.
	routes []string
	claims map[string][]*claim
	// unserved marks the routes with a hostname not served.
	unserved map[string]bool
}

// routeReports composes a report for every namespace but the owner's
// (whose administrators read the TenantGateway) with at least one route
// that has a hostname not served, at most MaxRouteReports: when more ask,
// the budgets' round-robin picks them (one namespace per branch of the
// delegation tree per round), so that a tenant's nested tenants, however
// many and however named, take no other branch's report. A report names
// only routes of its own namespace, and its Object writes only into that
// namespace, a namespace routes were read from.
func routeReports(in *Input, t *tenancy, claims []*claim) ([]kube.Resource, int, error) {
	byNS, order := collectReports(in, claims)
	var cands []budgeted
	for _, ns := range order {
		if len(byNS[ns].unserved) > 0 {
			cands = append(cands, budgeted{hostname: ns, namespace: ns})
		}
	}
	kept := fairShare(cands, MaxRouteReports, t)
	limit := min(maxReportBytes, maxReportsBytes/max(len(kept), 1))
	out := make([]kube.Resource, 0, len(kept))
	for _, ns := range order {
		r := byNS[ns]
		if len(r.unserved) == 0 || !kept[ns] {
			continue
		}
		o, err := reportObject(in, r, limit)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, kube.Resource{Key: ReportKey(ns), Object: o})
	}
	return out, len(cands) - len(kept), nil
}

// claimMessage is the message status.hostnames gives a claim.
func claimMessage(in *Input, c *claim) string {
	if c.message == "" && c.state == v1alpha1.HostnameOverListenerLimit {
		return overLimitMessage(in, c.hostname)
	}
	return c.message
}

// reportData is the ConfigMap's data: the summary, then one key per route
// whose hostnames are not all served, its lines joined, as many routes as
// fit in limit bytes (the summary says how many did not).
func reportData(in *Input, r *report, limit int) map[string]string {
	data := map[string]string{}
	var shown []string
	for _, key := range r.routes {
		if r.unserved[key] {
			shown = append(shown, key)
		}
	}
	size, kept := 0, 0
	for _, key := range shown {
		v := text.TruncateTo(reportLines(in, r.claims[key]), limit/4)
		if size+len(key)+len(v) > limit {
			break
		}
		data[key] = v
		size += len(key) + len(v)
		kept++
	}
	summary := fmt.Sprintf("Routes of namespace %s with hostnames Gateway %s/%s does not serve, one key per route (<kind>.<name>), one line per hostname: <hostname>: <state>: <why>. Written by TenantGateway %s/%s; the owner's administrators see the same in its status.hostnames.", r.namespace, in.Namespace, in.Name, in.Namespace, in.Name)
	if kept < len(shown) {
		summary += fmt.Sprintf(" %d more routes are left out of this report (size limit).", len(shown)-kept)
	}
	data[KeyReportSummary] = summary
	return data
}

// reportLines are a route's lines, one per hostname claim:
// "<hostname>: <state>: <why>".
func reportLines(in *Input, claims []*claim) string {
	var b strings.Builder
	for i, c := range claims {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.hostname)
		b.WriteString(": ")
		b.WriteString(string(c.state))
		b.WriteString(": ")
		b.WriteString(claimMessage(in, c))
	}
	return b.String()
}

// reportObject is the Object that writes a namespace's report. It may
// create, update and delete its ConfigMap (the default management
// policies): the ConfigMap is the function's, in the reported namespace.
func reportObject(in *Input, r *report, limit int) (*kobjv1alpha1.Object, error) {
	manifest := corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: ReportName(in.Name), Namespace: r.namespace, Labels: commonLabels(in)},
		Data:       reportData(in, r, limit),
	}
	raw, err := jsonobj.Manifest(&manifest)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the route report of namespace %s: %w", r.namespace, err)
	}
	return writerObject(in, ReportObjectName(in.Name, r.namespace), raw), nil
}

// collectReports groups the claims of every namespace but the owner's by
// route, the unserved ones marked, in namespace order.
func collectReports(in *Input, claims []*claim) (map[string]*report, []string) {
	byNS := map[string]*report{}
	var order []string
	for _, c := range claims {
		if c.namespace == in.Namespace {
			continue
		}
		r := byNS[c.namespace]
		if r == nil {
			r = &report{namespace: c.namespace, claims: map[string][]*claim{}, unserved: map[string]bool{}}
			byNS[c.namespace] = r
			order = append(order, c.namespace)
		}
		key := c.kind + "." + c.name
		if _, seen := r.claims[key]; !seen {
			r.routes = append(r.routes, key)
		}
		r.claims[key] = append(r.claims[key], c)
		if !isServed(c.state) && !c.recording {
			// A route waiting only for the ledger's record to be
			// written is served within a provider round trip: no
			// report is written and deleted for it.
			r.unserved[key] = true
		}
	}
	slices.Sort(order)
	return byNS, order
}
