//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// What the Cozystack controller writes under (docs/migration.md).
const (
	refManager        = "cozystack-controller"
	refControllerName = "gateway.cozystack.io/tenantgateway-controller"
	labelNSGateway    = "namespace.cozystack.io/gateway"
	annotationAttach  = "cozystack.io/gateway-attached-by"
)

// TestMigration runs the procedure of docs/migration.md on a platform
// shaped like Cozystack's (test/e2e/hack/reference-seed.sh, which up.sh ran
// before installing our Configuration: Helm v4 releases of a
// cozystack-controller chart rendering the TenantGateway CRD and of two
// gateway-owning tenants sharing an attached namespace, what the controller
// composed, a Certificate issued for real; then the procedure's steps
// before the install; up.sh's install is step 6) and checks what a platform
// would notice: no object deleted or re-created, no listener of a served
// hostname ever missing from a Gateway, no certificate re-issued, listeners
// and Certificates as they were wherever the design keeps them (every
// difference is listed here and in docs/migration.md), namespace marks
// never absent, the CRD surviving the old release's upgrade, and the
// function in charge afterwards.
func TestMigration(t *testing.T) {
	t.Parallel()
	start := time.Now()
	before := referenceState(t)
	// mig-http-dash is attached by both tenants and carries the marks of
	// mig-dns (reconciled last) until step 1's resolution gives it to the
	// publishing tenant.
	marks := watchMarks(t, before, map[string][]string{"mig-http": {"mig-http"}, "mig-http-dash": {"mig-dns", "mig-http"}, "mig-dns": {"mig-dns"}})
	served := watchServed(t, map[string][]string{
		"mig-http/cozystack": {"HTTP//", "HTTPS/app.alice.mig-http.example/cozystack-app-32a1e6c7-tls", "HTTPS/dash.mig-http.example/cozystack-dash-3696db18-tls",
			"HTTPS/www.mig-http.example/cozystack-www-a2f1ec61-tls", "TLS/api.mig-http.example/"},
		"mig-dns/cozystack": {"HTTP//", "HTTPS/*.mig-dns.example/" + migIssuedCert, "HTTPS/mig-dns.example/" + migIssuedCert,
			"HTTPS/*.bob.mig-dns.example/" + migIssuedCert},
	})

	// Step 6 happened in up.sh: the XRD adopted the controller's CRD, and the
	// TenantGateways kept their uid and spec.
	migrate(t, "check-crd")
	if uid := before.get(t, gvkTenantGateway, "mig-http", "cozystack").GetUID(); crd(t).GetUID() == "" || uid == "" {
		t.Fatalf("no CRD or no seeded TenantGateway")
	}
	if a := crd(t).GetAnnotations(); a["meta.helm.sh/release-name"] != "" {
		t.Errorf("the adopted CRD still carries Helm's release annotation: %v", a)
	}
	for _, ns := range []string{"mig-http", "mig-dns"} {
		was, now := before.get(t, gvkTenantGateway, ns, "cozystack"), tgw(t, ns, "cozystack")
		if now.GetUID() != was.GetUID() {
			t.Errorf("TenantGateway %s/cozystack re-created: uid %s, was %s", ns, now.GetUID(), was.GetUID())
		}
		if d := cmp.Diff(was.Object["spec"], now.Object["spec"]); d != "" {
			t.Errorf("TenantGateway %s/cozystack spec changed by the CRD's adoption (-controller's +now):\n%s", ns, d)
		}
	}

	// The certificate cert-manager issued under the controller, before the
	// switch (the seed created its Certificate before the install).
	cert := waitIssued(t, start)

	// Step 1, the pre-flight of the first takeover: the shared namespace is
	// labelled for mig-dns, so mig-http's takeover would stop serving its
	// route; the takeover refuses to start.
	shared := `BLOCKER attached namespaces: TenantGateway mig-http/cozystack attaches namespace mig-http-dash, whose label namespace.cozystack.io/gateway=mig-dns (cozystack.io/gateway-attached-by="mig-dns") names another owner: at the takeover of mig-http the function does not admit it, so its 1 routes (HTTPRoute/mig-http-dash/dash) on this Gateway stop being served`
	report := migrateExit(t, 3, "preflight", "mig-http/cozystack")
	for _, want := range []string{
		shared,
		"WARNING attached namespaces: namespace mig-http-dash is attached by 2 TenantGateways (mig-dns/cozystack, mig-http/cozystack)",
		"OK      CRD ownership: CRD tenantgateways.gateway.cozystack.io is controlled by the XRD tenantgateways.gateway.cozystack.io",
		"WARNING CRD ownership: Helm release cozy-system/cozystack-controller (revision 1) still renders CRD tenantgateways.gateway.cozystack.io without helm.sh/resource-policy=keep in its manifest, and its HelmRelease is suspended",
		"OK      controller: Deployment cozy-system/cozystack-controller is scaled to 0",
		"WARNING controller: HelmRelease cozy-system/cozystack-controller is suspended",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the pre-flight does not report %q", want)
		}
	}
	if out := migrateExit(t, 1, "takeover", "mig-http"); !strings.Contains(out, shared) {
		t.Errorf("the takeover did not refuse on the pre-flight's blocker")
	}
	if x := tgw(t, "mig-http", "cozystack"); x.GetAnnotations()["crossplane.io/paused"] != "true" {
		t.Errorf("a refused takeover resumed TenantGateway mig-http/cozystack: %v", x.GetAnnotations())
	}
	// Its resolution, as docs/migration.md says: the shared namespace given
	// to the publishing tenant, in one patch under the controller's field
	// manager (so the takeover hands the marks over).
	operator(t, "kubectl", "patch", "namespace", "mig-http-dash", "--type=merge", "--field-manager="+refManager, "-p",
		`{"metadata":{"labels":{"namespace.cozystack.io/gateway":"mig-http"},"annotations":{"cozystack.io/gateway-attached-by":"mig-http"}}}`)
	report = migrate(t, "preflight", "mig-http/cozystack")
	for _, want := range []string{
		"WARNING hostname winners: TenantGateway mig-http/cozystack, www.mig-http.example: HTTPRoute/mig-http-alice/steal, admitted by the controller's listener (a lost conflict is only reported), is not served by the function (NotDelegated",
		"OK      hostname winners: TenantGateway mig-http/cozystack: every hostname keeps the route that serves it (4 claimed)",
		"preflight: no blocker: the takeover may start",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the pre-flight does not report %q", want)
		}
	}

	migrate(t, "clear-route-status")
	migrate(t, "takeover", "mig-http")
	// mig-dns still attaches mig-http-dash, now labelled for mig-http, with
	// no route of it on mig-dns's Gateway: a warning, not a blocker.
	out := migrate(t, "takeover", "mig-dns")
	if want := "WARNING attached namespaces: TenantGateway mig-dns/cozystack attaches namespace mig-http-dash, whose label namespace.cozystack.io/gateway=mig-http"; !strings.Contains(out, want) {
		t.Errorf("the takeover's pre-flight of mig-dns does not report %q", want)
	}

	// Crossplane's next apply after the hand-over removes what only the
	// controller composed: the HTTPS listener of the passthrough hostname.
	want := map[string][]string{
		"mig-http": {"http=", "https-app-32a1e6c7=app.alice.mig-http.example", "https-dash-3696db18=dash.mig-http.example",
			"https-www-a2f1ec61=www.mig-http.example", "tls-api=api.mig-http.example"},
		"mig-dns": {"http=", "https=*.mig-dns.example", "https-apex=mig-dns.example", "https-child-bob-328277ce=*.bob.mig-dns.example"},
	}
	for ns, ls := range want {
		waitGateway(t, ns, "cozystack", fmt.Sprintf("the function's listeners %v", ls), func(got []string, _ *unstructured.Unstructured) bool { return slices.Equal(got, ls) })
	}
	t.Logf("migrated both tenants %s after the test started", time.Since(start).Round(time.Second))

	// Step 10 with Cozystack's proposals shipped: the old release upgraded
	// to a chart without the CRD, after the takeover.
	upgradeOldRelease(t)
	report = migrate(t, "preflight")
	for _, want := range []string{
		"OK      CRD ownership: Helm release cozy-system/cozystack-controller (revision 2) no longer renders CRD tenantgateways.gateway.cozystack.io",
		"OK      controller: Deployment cozy-system/cozystack-controller runs without the TenantGateway reconciler (--disable-controllers=tenantgateway)",
		"OK      controller: HelmRelease cozy-system/cozystack-controller is not suspended, and its release no longer renders the CRD and runs without the TenantGateway reconciler",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the pre-flight does not report %q", want)
		}
	}
	for ns, ls := range want {
		waitGateway(t, ns, "cozystack", fmt.Sprintf("the function's listeners %v", ls), func(got []string, _ *unstructured.Unstructured) bool { return slices.Equal(got, ls) })
	}

	t.Run("nothing re-created", func(t *testing.T) { sameObjects(t, before) })
	t.Run("listeners", func(t *testing.T) { sameListeners(t, before) })
	t.Run("certificates and issuers", func(t *testing.T) { sameCertificates(t, before) })
	t.Run("no certificate re-issued", func(t *testing.T) { cert.notReissued(t) })
	t.Run("served listeners never missing", func(t *testing.T) { served.check(t) })
	t.Run("ownership", func(t *testing.T) { takenOver(t) })
	t.Run("route status", func(t *testing.T) { routeStatusCleared(t) })
	t.Run("a lost conflict is no longer served", func(t *testing.T) { lostConflict(t) })
	t.Run("namespace marks never absent", func(t *testing.T) { marks.check(t, map[string]string{"mig-http-dash": "mig-http"}) })
	t.Run("a new route becomes a listener", func(t *testing.T) { newRoute(t) })
}

// snapshot is the cluster as the seed left it, by kind/namespace/name.
type snapshot map[string]*unstructured.Unstructured

func key(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

func (s snapshot) get(t *testing.T, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, ok := s[key(gvk.Kind, ns, name)]
	if !ok {
		t.Fatalf("the seed has no %s %s/%s", gvk.Kind, ns, name)
	}
	return u
}

// referenceState reads what reference-seed.sh saved before anything of ours
// ran.
func referenceState(t *testing.T) snapshot {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(os.Getenv("E2E_DIR"), "run", "reference-state.json"))
	if err != nil {
		t.Fatalf("no seeded Cozystack controller state (up.sh runs test/e2e/hack/reference-seed.sh through E2E_BEFORE_INSTALL, which make e2e sets): %v", err)
	}
	var l unstructured.UnstructuredList
	if err := l.UnmarshalJSON(b); err != nil {
		t.Fatalf("cannot decode the seeded state: %v", err)
	}
	s := snapshot{}
	for i := range l.Items {
		u := &l.Items[i]
		s[key(u.GetKind(), u.GetNamespace(), u.GetName())] = u
	}
	return s
}

// migrate runs one step of hack/migrate-from-cozystack.sh, as the operator
// does, with the control plane's kubectl and the pre-flight built once, and
// returns what it printed.
func migrate(t *testing.T, args ...string) string {
	t.Helper()
	bin := command(t, "preflight")
	cmd := exec.CommandContext(t.Context(), "bash", append([]string{filepath.Join("..", "..", "hack", "migrate-from-cozystack.sh")}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(os.Getenv("E2E_DIR"), "run", "bin")+string(os.PathListSeparator)+os.Getenv("PATH"), "MIGRATE_PREFLIGHT="+bin)
	out, err := cmd.CombinedOutput()
	t.Logf("migrate %s:\n%s", strings.Join(args, " "), out)
	if err != nil {
		t.Fatalf("migrate %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// marksWatch sees every write to the watched namespaces from the start of
// the test on, and keeps those in which a mark was not the expected one.
type marksWatch struct {
	stop   func()
	done   chan struct{}
	mu     sync.Mutex
	events int
	bad    []string
	// last is each namespace's label in the last version seen.
	last map[string]string
}

// watchMarks first checks that nothing wrote the namespaces since the seed
// (so the marks were there all along, through the Configuration's install),
// then watches them: a watch sees every version of an object, where a poll
// could miss a short absence.
func watchMarks(t *testing.T, before snapshot, want map[string][]string) *marksWatch {
	t.Helper()
	for ns := range want {
		now, _ := get(t, gvkNamespace, "", ns)
		if was := before.get(t, gvkNamespace, "", ns); now.GetResourceVersion() != was.GetResourceVersion() {
			t.Fatalf("namespace %s was written between the seed and the migration", ns)
		}
	}
	wc := watchClient(t)
	var l corev1.NamespaceList
	if err := k8s.List(t.Context(), &l); err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(t.Context(), &corev1.NamespaceList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	m := &marksWatch{stop: w.Stop, done: make(chan struct{}), last: map[string]string{}}
	go func() {
		defer close(m.done)
		for ev := range w.ResultChan() {
			ns, ok := ev.Object.(*corev1.Namespace)
			if !ok || want[ns.Name] == nil {
				continue
			}
			m.mu.Lock()
			m.events++
			m.last[ns.Name] = ns.Labels[labelNSGateway]
			if l := ns.Labels[labelNSGateway]; ev.Type == watch.Deleted || !slices.Contains(want[ns.Name], l) || ns.Annotations[annotationAttach] != l {
				m.bad = append(m.bad, fmt.Sprintf("%s %s at resourceVersion %s: label %q, annotation %q", ev.Type, ns.Name, ns.ResourceVersion, ns.Labels[labelNSGateway], ns.Annotations[annotationAttach]))
			}
			m.mu.Unlock()
		}
	}()
	t.Cleanup(w.Stop)
	return m
}

// check reports the versions that lost a mark, and a namespace whose last
// label is not the one final names.
func (m *marksWatch) check(t *testing.T, final map[string]string) {
	m.stop()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	for ns, want := range final {
		if m.last[ns] != want {
			t.Errorf("namespace %s: last label seen %q, want %q", ns, m.last[ns], want)
		}
	}
	// The takeover writes each namespace: provider-kubernetes' apply, then
	// the release of the controller's claim.
	if m.events < 3 {
		t.Errorf("saw %d writes to the marked namespaces, expected the takeover's (at least one per namespace)", m.events)
	}
	for _, b := range m.bad {
		t.Errorf("a namespace lost its mark: %s", b)
	}
	t.Logf("%d writes to the marked namespaces, each with both marks", m.events)
}

// sameObjects: every object of the seed still exists under the same uid;
// the Secrets (ACME accounts, issued certificates) were not even written.
func sameObjects(t *testing.T, before snapshot) {
	for _, was := range before {
		gvk := was.GroupVersionKind()
		now, found := get(t, gvk, was.GetNamespace(), was.GetName())
		switch {
		case !found:
			t.Errorf("%s %s/%s was deleted", gvk.Kind, was.GetNamespace(), was.GetName())
		case now.GetUID() != was.GetUID():
			t.Errorf("%s %s/%s was re-created", gvk.Kind, was.GetNamespace(), was.GetName())
		case gvk.Kind == "Secret" && now.GetResourceVersion() != was.GetResourceVersion():
			t.Errorf("Secret %s/%s was written", was.GetNamespace(), was.GetName())
		}
	}
}

// sameListeners: each listener the function keeps has the controller's
// name, position, port, protocol, hostname, TLS and route kinds; only the
// namespace selectors differ, narrowed to the namespaces delegated the
// hostname ("Who may attach" in docs/design.md). The controller's
// https-api-9b3eece6 (an HTTPS listener for the passthrough hostname its
// TLSRoute claimed) is gone: the function gives that hostname tls-api only.
func sameListeners(t *testing.T, before snapshot) {
	selectors := map[string]map[string]string{
		"mig-http": {
			"http":                `{"matchExpressions":[{"key":"kubernetes.io/metadata.name","operator":"In","values":["mig-http","cozy-cert-manager"]}]}`,
			"https-app-32a1e6c7":  `{"matchLabels":{"kubernetes.io/metadata.name":"mig-http-alice","namespace.cozystack.io/gateway":"mig-http"}}`,
			"https-dash-3696db18": `{"matchLabels":{"kubernetes.io/metadata.name":"mig-http-dash","namespace.cozystack.io/gateway":"mig-http"}}`,
			"https-www-a2f1ec61":  `{"matchLabels":{"kubernetes.io/metadata.name":"mig-http","namespace.cozystack.io/gateway":"mig-http"}}`,
			// tls-api admits only the namespace whose TLSRoute holds
			// api.<apex> (docs/design.md, Conflicts).
			"tls-api": `{"matchLabels":{"kubernetes.io/metadata.name":"mig-http","namespace.cozystack.io/gateway":"mig-http"}}`,
		},
		"mig-dns": {
			"http":                     `{"matchExpressions":[{"key":"kubernetes.io/metadata.name","operator":"In","values":["mig-dns","cozy-cert-manager"]}]}`,
			"https":                    `{"matchExpressions":[{"key":"kubernetes.io/metadata.name","operator":"In","values":["mig-dns"]}],"matchLabels":{"namespace.cozystack.io/gateway":"mig-dns"}}`,
			"https-apex":               `{"matchExpressions":[{"key":"kubernetes.io/metadata.name","operator":"In","values":["mig-dns"]}],"matchLabels":{"namespace.cozystack.io/gateway":"mig-dns"}}`,
			"https-child-bob-328277ce": `{"matchLabels":{"namespace.cozystack.io/gateway":"mig-dns","namespace.cozystack.io/host":"bob.mig-dns.example"}}`,
		},
	}
	for ns, sel := range selectors {
		was := before.get(t, gvkGateway, ns, "cozystack")
		now, _ := get(t, gvkGateway, ns, "cozystack")
		var kept []any
		for _, l := range slice(was, "spec", "listeners") {
			if _, ok := sel[l.(map[string]any)["name"].(string)]; ok {
				kept = append(kept, l)
			}
		}
		if d := cmp.Diff(withoutSelectors(kept), withoutSelectors(slice(now, "spec", "listeners"))); d != "" {
			t.Errorf("Gateway %s/cozystack listeners differ beyond their selectors (-controller's +function's):\n%s", ns, d)
		}
		if str(now, "spec", "gatewayClassName") != str(was, "spec", "gatewayClassName") {
			t.Errorf("Gateway %s/cozystack class %q, was %q", ns, str(now, "spec", "gatewayClassName"), str(was, "spec", "gatewayClassName"))
		}
		for _, l := range slice(now, "spec", "listeners") {
			m := l.(map[string]any)
			var want any
			_ = json.Unmarshal([]byte(sel[m["name"].(string)]), &want)
			got, _, _ := unstructured.NestedFieldNoCopy(m, "allowedRoutes", "namespaces", "selector")
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("Gateway %s/cozystack listener %s selector (-want +got):\n%s", ns, m["name"], d)
			}
		}
	}
}

// withoutSelectors copies listeners without their namespace selectors.
func withoutSelectors(ls []any) []any {
	out := make([]any, 0, len(ls))
	for _, l := range ls {
		c := (&unstructured.Unstructured{Object: l.(map[string]any)}).DeepCopy().Object
		unstructured.RemoveNestedField(c, "allowedRoutes", "namespaces", "selector")
		out = append(out, c)
	}
	return out
}

// sameCertificates: Certificates and Issuers keep their spec (no new ACME
// order, the same account key), and the redirect route its spec.
func sameCertificates(t *testing.T, before snapshot) {
	for _, k := range []struct {
		gvk      schema.GroupVersionKind
		ns, name string
	}{
		{gvkIssuer, "mig-http", "cozystack-gateway"},
		{gvkCertificate, "mig-http", "cozystack-app-32a1e6c7-tls"},
		{gvkCertificate, "mig-http", "cozystack-dash-3696db18-tls"},
		{gvkCertificate, "mig-http", "cozystack-www-a2f1ec61-tls"},
		{gvkHTTPRoute, "mig-http", "cozystack-http-redirect"},
		{gvkIssuer, "mig-dns", "cozystack-gateway"},
		{gvkCertificate, "mig-dns", "cozystack-gateway-tls"},
		{gvkHTTPRoute, "mig-dns", "cozystack-http-redirect"},
	} {
		now, _ := get(t, k.gvk, k.ns, k.name)
		want := before.get(t, k.gvk, k.ns, k.name).DeepCopy().Object["spec"]
		if k.gvk == gvkHTTPRoute {
			want = withChallengeRule(want)
		}
		if d := cmp.Diff(want, now.Object["spec"]); d != "" {
			t.Errorf("%s %s/%s spec changed (-controller's +function's):\n%s", k.gvk.Kind, k.ns, k.name, d)
		}
	}
}

// withChallengeRule is the controller's redirect spec with the one rule the
// function adds in front (docs/migration.md): ACME challenge paths are not
// redirected, so only cert-manager's solver route answers them.
func withChallengeRule(spec any) any {
	s, ok := spec.(map[string]any)
	if !ok {
		return spec
	}
	rules, _ := s["rules"].([]any)
	challenge := map[string]any{"matches": []any{map[string]any{"path": map[string]any{
		"type": string(gwapiv1.PathMatchPathPrefix), "value": gateway.ACMEChallengePath,
	}}}}
	s["rules"] = append([]any{challenge}, rules...)
	return s
}

// takenOver: every object the function composes is Crossplane's alone
// (composition resource name, our managed-by label, no field left to the
// controller's manager); the namespaces' marks are provider-kubernetes'
// alone. The Certificate the controller made for the passthrough hostname
// is left over: still controlled by the TenantGateway (so it goes with it),
// not composed, not deleted (docs/migration.md says to delete it).
func takenOver(t *testing.T) {
	for _, ns := range []string{"mig-http", "mig-dns"} {
		x := tgw(t, ns, "cozystack")
		if s, r, m := condition(x, "Synced"); s != "True" {
			t.Errorf("TenantGateway %s/cozystack Synced=%s %s: %s", ns, s, r, m)
		}
		for _, ref := range slice(x, "spec", "crossplane", "resourceRefs") {
			r := ref.(map[string]any)
			gv, _ := schema.ParseGroupVersion(r["apiVersion"].(string))
			u, found := get(t, gv.WithKind(r["kind"].(string)), ns, r["name"].(string))
			if !found {
				t.Errorf("%s %s/%s referenced but absent", r["kind"], ns, r["name"])
				continue
			}
			if u.GetAnnotations()["crossplane.io/composition-resource-name"] == "" || u.GetLabels()["cozystack.io/managed-by"] != "function-tenant-gateway" {
				t.Errorf("%s %s/%s is not marked as composed: labels %v annotations %v", r["kind"], ns, r["name"], u.GetLabels(), u.GetAnnotations())
			}
			for _, f := range u.GetManagedFields() {
				if f.Manager == refManager && f.Subresource == "" {
					t.Errorf("%s %s/%s: the controller's manager still owns %s", r["kind"], ns, r["name"], f.FieldsV1.GetRawString())
				}
			}
		}
	}
	for _, ns := range []string{"mig-http", "mig-http-dash", "mig-dns"} {
		n, _ := get(t, gvkNamespace, "", ns)
		for _, f := range n.GetManagedFields() {
			raw := f.FieldsV1.GetRawString()
			// The tenant chart writes the owner namespace's label: Helm
			// keeps it, and the function never releases its own namespace.
			helmLabel := f.Manager == "helm" && ns != "mig-http-dash" && !strings.Contains(raw, "f:"+annotationAttach)
			if f.Manager != "" && !strings.HasPrefix(f.Manager, "provider-kubernetes/") && !helmLabel &&
				(strings.Contains(raw, "f:"+labelNSGateway) || strings.Contains(raw, "f:"+annotationAttach)) {
				t.Errorf("namespace %s: %s still owns a mark: %s", ns, f.Manager, raw)
			}
		}
	}
	left, _ := get(t, gvkCertificate, "mig-http", "cozystack-api-9b3eece6-tls")
	if left == nil || left.GetLabels()["cozystack.io/managed-by"] != "cozystack-controller" || metav1.GetControllerOf(left) == nil ||
		metav1.GetControllerOf(left).UID != tgw(t, "mig-http", "cozystack").GetUID() {
		t.Errorf("the controller's Certificate of the passthrough hostname should be left as it was, controlled by the TenantGateway: %v", left)
	}
}

// routeStatusCleared: no route keeps an entry under the controller's name;
// the Gateway controller's entries stay.
func routeStatusCleared(t *testing.T) {
	for _, r := range []struct {
		gvk      schema.GroupVersionKind
		ns, name string
	}{
		{gvkHTTPRoute, "mig-http", "www"}, {gvkHTTPRoute, "mig-http-dash", "dash"}, {gvkHTTPRoute, "mig-http-alice", "app"},
		{gvkHTTPRoute, "mig-http-alice", "steal"}, {gvkTLSRoute, "mig-http", "api"},
	} {
		u, _ := get(t, r.gvk, r.ns, r.name)
		var names []string
		for _, p := range slice(u, "status", "parents") {
			names = append(names, p.(map[string]any)["controllerName"].(string))
		}
		if d := cmp.Diff([]string{"io.cilium/gateway-controller"}, names); d != "" {
			t.Errorf("%s %s/%s status controllers (-want +got):\n%s", r.gvk.Kind, r.ns, r.name, d)
		}
	}
}

// lostConflict: the route the controller reported as a HostnameConflict
// but kept serving (alice's, on her parent's hostname) is reported
// NotDelegated and admitted by no listener of that hostname: the one
// disruption docs/migration.md tells the operator to resolve first.
func lostConflict(t *testing.T) {
	var got []string
	for _, h := range slice(tgw(t, "mig-http", "cozystack"), "status", "hostnames") {
		m := h.(map[string]any)
		if m["hostname"] == "www.mig-http.example" {
			got = append(got, fmt.Sprintf("%v %v", m["route"], m["state"]))
		}
	}
	want := []string{"HTTPRoute/mig-http-alice/steal NotDelegated", "HTTPRoute/mig-http/www Listening"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("status.hostnames for www.mig-http.example (-want +got):\n%s", d)
	}
}

// newRoute: after the migration a new route is the function's to serve.
func newRoute(t *testing.T) {
	apply(t, httpRoute("mig-http", "new", "mig-http", "cozystack", "new.mig-http.example"))
	waitGateway(t, "mig-http", "cozystack", "listener https-new-4df1e318", func(ls []string, _ *unstructured.Unstructured) bool {
		return slices.Contains(ls, "https-new-4df1e318=new.mig-http.example")
	})
	eventually(t, settle, "Certificate cozystack-new-4df1e318-tls", func() (bool, string) {
		c, found := get(t, gvkCertificate, "mig-http", "cozystack-new-4df1e318-tls")
		return found && fmt.Sprint(slice(c, "spec", "dnsNames")) == "[new.mig-http.example]", show(c)
	})
}
