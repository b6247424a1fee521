package envoy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/function-tenant-gateway/test/render"
)

// notJudged are the render scenarios that compose no Gateway, with why.
// Scenarios of a Tenant claim (xr.yaml of kind Tenant or XTenant) compose
// a namespace and, for owners, a TenantGateway: they are never judged and
// need no row.
var notJudged = map[string]string{
	"foreign-objects":     "a Gateway someone created by hand sits at the derived name, so the function composes none (the ownership guard)",
	"acme-server-invalid": "a refused spec.acme: the golden is the Fatal message, nothing is composed",
}

// judged are the render scenarios that compose a Gateway, each with what
// it puts before the judge and how many subjects each check of Judge
// judged (listeners, claims, routes, port-80 hostnames): a check that
// passes with nothing to judge would prove nothing, and a golden that
// changes what it shows should be looked at here too. OverlappingTLSConfig
// is not a check: it counts the listeners Envoy Gateway serves HTTP/1.1
// only, because one certificate covers several of them (see Verdict).
var judged = map[string]struct {
	shows  string
	counts map[string]int
}{
	"acme-server": {
		shows:  "an ACME server of its own changes only the Issuer: the http listener alone; port 80 redirects, as in http01",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 1, CheckRouteTable: 1, CheckPort80: 1},
	},
	"orders-waiting": {
		shows:  "the ACME order quota (10 for the domain): alice's branch gets its fair share beside bob's order and a newcomer's part, and her seven hostnames past it wait, with no listener and no Certificate; the five ordered and bob's are served",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 7, CheckRouteTable: 7, CheckFilterChains: 1, CheckPort80: 14, CheckRefused: 7, CheckServedAccepted: 6, CheckServedCertificate: 6, CheckServedRouting: 6},
	},
	"reach-into-zone-edge": {
		shows:  "a wildcard reaching into a nested tenant's zone on an edge Gateway: the claimant is kept off its own wider listener, so the one port-80 route table lists the name once, under the nested tenant's listener",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 4, CheckRouteTable: 1, CheckRefused: 2, CheckRouteRefused: 2, CheckServedAccepted: 2, CheckServedRouting: 2},
	},
	"passthrough-duplicate": {
		shows:  "two TLSRoutes of one namespace on one passthrough hostname, and a wildcard TLSRoute of another publisher: tls-api admits none of them, so no two filter chains match one server name",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 5, CheckRouteTable: 3, CheckFilterChains: 1, overlappingTLS: 2, CheckPort80: 4, CheckRefused: 3, CheckRouteRefused: 3, CheckServedAccepted: 1, CheckServedCertificate: 1, CheckServedRouting: 1},
	},
	"contest-long-name-edge": {
		shows:  "a contest on a name whose label-derived listener name would pass 253 characters (edge): the pin takes the hash form, and the shared port-80 table lists the name once",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 5, CheckRouteTable: 1, CheckRefused: 1, CheckServedAccepted: 2, CheckServedRouting: 2},
	},
	"class-without-tlsroute": {
		shows:  "a passthrough listener on a class whose features lack TLSRoute (the function reports it); for Envoy Gateway's class, which serves TLSRoutes, the Gateway is healthy and port 80 redirects",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 2, CheckRouteTable: 1, CheckPort80: 1},
	},
	"conflict": {
		shows: "http01 conflict: the winner served on its pinned listener with its own Certificate; the owner's losing route refused on 443, " +
			"and served on port 80 by the owner's right; a child's hostname served to the child",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 3, CheckRouteTable: 3, CheckFilterChains: 1, CheckPort80: 3, CheckRefused: 1, CheckServedAccepted: 2, CheckServedCertificate: 2, CheckServedRouting: 2},
	},
	"conflict-dns01": {
		shows: "dns01 pins: a contested name and the contested apex pinned to the cozy-* winners, the loser refused on both; the parent's name under a child apex served by its own pin; " +
			"one wildcard Certificate on every HTTPS listener",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 4, CheckRouteTable: 4, CheckFilterChains: 1, overlappingTLS: 3, CheckPort80: 4, CheckRefused: 2, CheckServedAccepted: 3, CheckServedCertificate: 3, CheckServedRouting: 3},
	},
	"conflict-under-child": {
		shows:  "dns01: a name under a child apex contested by an attached namespace; the child wins and gets a pin, so the apex's wildcard no longer carries the loser",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 5, CheckRouteTable: 5, CheckFilterChains: 1, overlappingTLS: 4, CheckPort80: 2, CheckRefused: 1, CheckRouteRefused: 1, CheckServedAccepted: 1, CheckServedCertificate: 1, CheckServedRouting: 1},
	},
	"conflict-under-child-edge": {
		shows:  "edge: the same contest; the pin keeps the name out of the apex listener, so the shared port-80 route table lists it once",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 4, CheckRouteTable: 1, CheckRefused: 1, CheckRouteRefused: 1, CheckServedAccepted: 1, CheckServedRouting: 1},
	},
	"delegation": {
		shows:  "a child's claim on its parent's name refused (NotDelegated); the child's own name, claimed by the parent too, served to the child only",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 3, CheckRouteTable: 3, CheckFilterChains: 1, CheckPort80: 3, CheckRefused: 2, CheckServedAccepted: 2, CheckServedCertificate: 2, CheckServedRouting: 2},
	},
	"dns01-cloudflare": {
		shows: "dns01 child listeners admitting only their child; the wildcard certificate covering one label down and a name two labels down that the status warns of; " +
			"a route of a tenant outside the apex refused",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 5, CheckRouteTable: 5, CheckFilterChains: 1, overlappingTLS: 4, CheckPort80: 6, CheckRefused: 1, CheckRouteRefused: 1, CheckServedAccepted: 4, CheckServedCertificate: 4, CheckServedRouting: 4},
	},
	"dns01-route53": {
		shows:  "dns01 through route53, no route: the fixed https and https-apex listeners on the one wildcard Certificate (both listeners overlap on it); port 80 redirects",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 3, CheckRouteTable: 3, CheckFilterChains: 1, overlappingTLS: 2, CheckPort80: 1},
	},
	"dns01-digitalocean": {
		shows:  "dns01 through digitalocean, no route: the fixed https and https-apex listeners on the one wildcard Certificate (both listeners overlap on it); port 80 redirects",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 3, CheckRouteTable: 3, CheckFilterChains: 1, overlappingTLS: 2, CheckPort80: 1},
	},
	"dns01-rfc2136": {
		shows:  "dns01 through rfc2136, no route: the fixed https and https-apex listeners on the one wildcard Certificate (both listeners overlap on it); port 80 redirects",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 3, CheckRouteTable: 3, CheckFilterChains: 1, overlappingTLS: 2, CheckPort80: 1},
	},
	"edge": {
		shows:  "edge: the apex's and the child's names served on port 80 in plain HTTP, nothing on 443; the TLSRoute refused",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 3, CheckRouteTable: 1, CheckRefused: 1, CheckRouteRefused: 1, CheckServedAccepted: 2, CheckServedRouting: 2},
	},
	"envoy-gateway": {
		shows: "Envoy Gateway's own class, judged as composed: an HTTPS listener of [HTTPRoute], passthrough listeners of [TLSRoute]; the TLSRoute's name passed through with no certificate, " +
			"the HTTPRoute that lost it to the TLSRoute refused on 443",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 5, CheckRouteTable: 2, CheckFilterChains: 1, CheckPort80: 3, CheckRefused: 1, CheckServedAccepted: 2, CheckServedCertificate: 2, CheckServedRouting: 2},
	},
	"existing-secret": {
		shows:  "existingSecret: every HTTPS listener presents the operator's Secret (its SANs are made from the listeners' hostnames: coverage is not judged against a real certificate)",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 4, CheckRouteTable: 4, CheckFilterChains: 1, overlappingTLS: 3, CheckPort80: 3, CheckServedAccepted: 2, CheckServedCertificate: 2, CheckServedRouting: 2},
	},
	"http01": {
		shows:  "the http listener alone; port 80 redirects",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 1, CheckRouteTable: 1, CheckPort80: 1},
	},
	"http01-routes": {
		shows:  "http01: a listener and a Certificate per name, for the owner and a child; an unadmitted namespace's route refused; a route naming sectionName https, which no http01 Gateway has, refused (NoMatchingParent) with no listener",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 4, CheckRouteTable: 4, CheckFilterChains: 1, CheckPort80: 6, CheckRefused: 1, CheckRouteRefused: 2, CheckServedAccepted: 3, CheckServedCertificate: 3, CheckServedRouting: 3},
	},
	"invalid-hostnames": {
		shows:  "invalid and out-of-apex names get nothing on 443; the owner's route serves them all on port 80, its *.example.org every name under the apex",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 3, CheckRouteTable: 3, CheckFilterChains: 1, CheckPort80: 6, CheckRefused: 3, CheckServedAccepted: 2, CheckServedCertificate: 2, CheckServedRouting: 2},
	},
	"listener-limit": {
		shows:  "64 listeners: 63 names served with their own Certificates, the 7 OverListenerLimit refused on 443 (the owner's routes serve all 70 on port 80)",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 64, CheckRouteTable: 64, CheckFilterChains: 1, CheckPort80: 71, CheckRefused: 7, CheckServedAccepted: 63, CheckServedCertificate: 63, CheckServedRouting: 63},
	},
	"namespace-patches": {
		shows:  "the http listener alone; port 80 redirects",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 1, CheckRouteTable: 1, CheckPort80: 1},
	},
	"cozystack-chart": {
		shows:  "what the old Cozystack chart renders: dns01 with route53 on ambient credentials and repeated attached namespaces, used once: a healthy Gateway of six listeners, one filter chain per server name, port 80 redirecting",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 6, CheckRouteTable: 3, CheckFilterChains: 1, overlappingTLS: 2, CheckPort80: 1},
	},
	"pinned-address": {
		shows:  "an address pinned through spec.infrastructure and spec.addresses: the http listener alone, accepted; port 80 redirects, as in http01",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 1, CheckRouteTable: 1, CheckPort80: 1},
	},
	"section-names": {
		shows:  "routes naming listeners and ports: served where they name the listener that takes the name; refused where they name another, a port with no HTTPS listener, or the wildcard a pin takes the name from",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 5, CheckRouteTable: 5, CheckFilterChains: 1, overlappingTLS: 4, CheckPort80: 7, CheckRefused: 4, CheckRouteRefused: 2, CheckServedAccepted: 3, CheckServedCertificate: 3, CheckServedRouting: 3},
	},
	"section-names-edge": {
		shows:  "edge: routes naming a child listener or edge for names another namespace contests: the pins take the names, so neither side is served and the shared port-80 route table lists each name once; a child's uncontested name served on the child listener it names; port 443 refused",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 5, CheckRouteTable: 1, CheckRefused: 5, CheckRouteRefused: 4, CheckServedAccepted: 1, CheckServedRouting: 1},
	},
	"passthrough": {
		shows:  "as envoy-gateway, composed for a Cilium class and judged with the kinds the function gives Envoy Gateway's",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 5, CheckRouteTable: 2, CheckFilterChains: 1, CheckPort80: 3, CheckRefused: 1, CheckServedAccepted: 2, CheckServedCertificate: 2, CheckServedRouting: 2},
	},
	"platform-cert-manager": {
		shows:  "the http listener alone, admitting the cert-manager namespace the platform settings name; port 80 redirects",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 1, CheckRouteTable: 1, CheckPort80: 1},
	},
	"status-listener-not-programmed": {
		shows:  "scenarios of the observed Gateway's status; what they compose is plain http01, judged so",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 3, CheckRouteTable: 3, CheckFilterChains: 1, CheckPort80: 3, CheckServedAccepted: 2, CheckServedCertificate: 2, CheckServedRouting: 2},
	},
	"status-not-accepted": {
		shows:  "as status-listener-not-programmed",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 2, CheckRouteTable: 2, CheckFilterChains: 1, CheckPort80: 2, CheckServedAccepted: 1, CheckServedCertificate: 1, CheckServedRouting: 1},
	},
	"status-class-not-found": {
		shows:  "as status-listener-not-programmed (the judge gives the Gateway Envoy Gateway's class, which exists)",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 2, CheckRouteTable: 2, CheckFilterChains: 1, CheckPort80: 2, CheckServedAccepted: 1, CheckServedCertificate: 1, CheckServedRouting: 1},
	},
	"status-not-programmed": {
		shows:  "as status-listener-not-programmed",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 2, CheckRouteTable: 2, CheckFilterChains: 1, CheckPort80: 2, CheckServedAccepted: 1, CheckServedCertificate: 1, CheckServedRouting: 1},
	},
	"status-certificate-not-ready": {
		shows:  "as status-listener-not-programmed",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 3, CheckRouteTable: 3, CheckFilterChains: 1, CheckPort80: 3, CheckServedAccepted: 2, CheckServedCertificate: 2, CheckServedRouting: 2},
	},
	"status-ready": {
		shows:  "as status-listener-not-programmed",
		counts: map[string]int{CheckGatewayAccepted: 1, CheckListenerHealthy: 2, CheckRouteTable: 2, CheckFilterChains: 1, CheckPort80: 2, CheckServedAccepted: 1, CheckServedCertificate: 1, CheckServedRouting: 1},
	},
}

// A knownDisagreement is a disagreement between the judge and the function
// that is understood and not fixed yet. When the function is fixed, the
// disagreement disappears and TestExamples fails until its row is removed.
type knownDisagreement struct {
	scenario, check, subject string
	reason                   string
}

// None: an entry is a disagreement known and not fixed, with its reason.
var knownDisagreements = []knownDisagreement{}

// TestExamples has Envoy Gateway's translator judge the Gateway of every
// user example and test scenario that composes one (their expected.yaml,
// the committed goldens) and fails on every disagreement with the function's
// status and docs/design.md that knownDisagreements does not list (see
// Judge for what is checked), and on every listed one that no longer
// occurs.
func TestExamples(t *testing.T) {
	egctl := Egctl(t)
	root, err := render.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	scenarios, err := render.Scenarios(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			s, err := LoadScenario(sc.Dir, filepath.Join(sc.Dir, render.FileExpected))
			if errors.Is(err, ErrNoGateway) {
				skipWithoutGateway(t, sc)
			}
			if err != nil {
				t.Fatal(err)
			}
			if reason, ok := notJudged[sc.Name]; ok {
				t.Fatalf("composes a Gateway now, yet notJudged says %q: judge it", reason)
			}
			want, ok := judged[sc.Name]
			if !ok {
				t.Fatalf("composes a Gateway: add it to judged, with what it shows")
			}
			rewritten := s.AsForEnvoyGateway()
			if sc.Name == "envoy-gateway" && (s.ClassController != ControllerName || len(rewritten) > 0) {
				t.Errorf("the envoy-gateway scenario must observe Envoy Gateway's class (it observes %q) and be judged as composed (rewritten: %v)", s.ClassController, rewritten)
			}
			r, err := Translate(context.Background(), egctl, s)
			if err != nil {
				t.Fatal(err)
			}
			v, err := Judge(s, r)
			if err != nil {
				t.Fatal(err)
			}
			checkDisagreements(t, sc.Name, v.Disagreements)
			if d := cmp.Diff(want.counts, v.Judged); d != "" {
				t.Errorf("it shows %s; the subjects judged per check changed (-want +got):\n%s", want.shows, d)
			}
			if t.Failed() || testing.Verbose() {
				t.Logf("route kinds rewritten for Envoy Gateway's class on %v\n%s", rewritten, summarise(r))
			}
		})
	}
}

// skipWithoutGateway skips a scenario that composes no Gateway, failing
// unless it is a Tenant claim or notJudged says why.
func skipWithoutGateway(t *testing.T, sc render.Scenario) {
	t.Helper()
	if reason, ok := notJudged[sc.Name]; ok {
		t.Skip(reason)
	}
	b, err := os.ReadFile(filepath.Join(sc.Dir, "xr.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var xr struct{ Kind string }
	if err := yaml.Unmarshal(b, &xr); err != nil {
		t.Fatal(err)
	}
	if xr.Kind == "Tenant" || xr.Kind == "XTenant" {
		t.Skip("a Tenant claim composes a namespace and a TenantGateway, not a Gateway")
	}
	t.Fatalf("composes no Gateway: add it to notJudged with the reason")
}

// checkDisagreements fails on every disagreement not known for the
// scenario and on every known one that did not occur.
func checkDisagreements(t *testing.T, scenario string, got []Disagreement) {
	t.Helper()
	known := map[[2]string]string{}
	for _, k := range knownDisagreements {
		if k.scenario == scenario {
			known[[2]string{k.check, k.subject}] = k.reason
		}
	}
	seen := map[[2]string]bool{}
	for _, d := range got {
		k := [2]string{d.Check, d.Subject}
		if reason, ok := known[k]; ok {
			seen[k] = true
			t.Logf("known disagreement (%s): %v", reason, d)
			continue
		}
		t.Errorf("Envoy Gateway disagrees: %v", d)
	}
	for k, reason := range known {
		if !seen[k] {
			t.Errorf("known disagreement %s %s no longer occurs (%s): remove it from knownDisagreements", k[0], k[1], reason)
		}
	}
}

// summarise is a line per listener, route and port-443 server name, for a
// failing test to show what the translator made of the scenario.
func summarise(r *Result) string {
	var lines []string
	lines = append(lines, fmt.Sprintf("Gateway %s/%s: %+v (%d translator runs)", r.Gateway.Namespace, r.Gateway.Name, r.GatewayAccepted(), len(r.Runs)))
	ls := r.Listeners()
	for _, name := range sortedKeys(ls) {
		lines = append(lines, fmt.Sprintf("listener %s: %+v attached=%d", name, ls[name].Conditions, ls[name].AttachedRoutes))
	}
	for _, h := range r.HTTPRoutes {
		p, _ := r.RouteParents(kindHTTPRoute, h.Namespace, h.Name)
		lines = append(lines, fmt.Sprintf("HTTPRoute %s/%s: %+v", h.Namespace, h.Name, p))
	}
	for _, tr := range r.TLSRoutes {
		p, _ := r.RouteParents(kindTLSRoute, tr.Namespace, tr.Name)
		lines = append(lines, fmt.Sprintf("TLSRoute %s/%s: %+v", tr.Namespace, tr.Name, p))
	}
	sni := r.SNI(443)
	for _, n := range sortedKeys(sni) {
		lines = append(lines, fmt.Sprintf("SNI %s: %+v", n, sni[n]))
	}
	for port, m := range map[int32]map[string][]string{443: r.DomainBackends(443), 80: r.DomainBackends(80)} {
		for _, d := range sortedKeys(m) {
			lines = append(lines, fmt.Sprintf("port %d %s -> %v", port, d, m[d]))
		}
	}
	sort.Strings(lines[1:])
	return strings.Join(lines, "\n")
}
