//go:build e2e

package e2e

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What the seed's platform is made of (test/e2e/hack/reference-seed.sh):
// the controller's Helm release and its Flux HelmRelease, and the
// Certificate cert-manager issues for real in mig-dns.
const (
	controllerRelease   = "cozystack-controller"
	controllerNamespace = "cozy-system"
	crdTenantGateways   = "tenantgateways.gateway.cozystack.io"
	migIssuedCert       = "cozystack-gateway-tls"
)

var gvkCRD = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// migrateExit runs a step of hack/migrate-from-cozystack.sh that must exit
// with code want (3: the pre-flight reported a blocker), and returns what
// it printed.
func migrateExit(t *testing.T, want int, args ...string) string {
	t.Helper()
	bin := command(t, "preflight")
	cmd := exec.CommandContext(t.Context(), "bash", append([]string{filepath.Join("..", "..", "hack", "migrate-from-cozystack.sh")}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(os.Getenv("E2E_DIR"), "run", "bin")+string(os.PathListSeparator)+os.Getenv("PATH"), "MIGRATE_PREFLIGHT="+bin)
	out, err := cmd.CombinedOutput()
	t.Logf("migrate %s (want exit %d):\n%s", strings.Join(args, " "), want, out)
	var ee *exec.ExitError
	switch {
	case want == 0 && err != nil, want != 0 && !errors.As(err, &ee):
		t.Fatalf("migrate %s: %v", strings.Join(args, " "), err)
	case want != 0 && ee.ExitCode() != want:
		t.Fatalf("migrate %s: exit %d, want %d", strings.Join(args, " "), ee.ExitCode(), want)
	}
	return string(out)
}

// operator runs a command of docs/migration.md as the operator does
// (kubectl and helm of the control plane, the admin's kubeconfig).
func operator(t *testing.T, name string, args ...string) string {
	t.Helper()
	run := filepath.Join(os.Getenv("E2E_DIR"), "run")
	cmd := exec.CommandContext(t.Context(), filepath.Join(run, "bin", name), args...)
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(run, "helm", "config"),
		"HELM_CACHE_HOME="+filepath.Join(run, "helm", "cache"), "HELM_DATA_HOME="+filepath.Join(run, "helm", "data"))
	out, err := cmd.CombinedOutput()
	t.Logf("%s %s:\n%s", name, strings.Join(args, " "), out)
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out)
}

// servedWatch sees every version of the watched Gateways and keeps those in
// which a listener of a served hostname was missing.
type servedWatch struct {
	want   map[string][]string
	stop   func()
	done   chan struct{}
	mu     sync.Mutex
	events map[string]int
	bad    []string
}

// servedListeners are a Gateway's listeners as protocol/hostname/certificate.
func servedListeners(gw *unstructured.Unstructured) []string {
	var out []string
	for _, l := range slice(gw, "spec", "listeners") {
		m, _ := l.(map[string]any)
		h, _ := m["hostname"].(string)
		var cert string
		if refs, _, _ := unstructured.NestedSlice(m, "tls", "certificateRefs"); len(refs) > 0 {
			cert, _ = refs[0].(map[string]any)["name"].(string)
		}
		out = append(out, fmt.Sprintf("%v/%s/%s", m["protocol"], h, cert))
	}
	return out
}

func (w *servedWatch) judge(gw *unstructured.Unstructured, how string) {
	key := gw.GetNamespace() + "/" + gw.GetName()
	want, ok := w.want[key]
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events[key]++
	got := servedListeners(gw)
	for _, l := range want {
		if !slices.Contains(got, l) {
			w.bad = append(w.bad, fmt.Sprintf("%s Gateway %s at resourceVersion %s has no listener %s: %v", how, key, gw.GetResourceVersion(), l, got))
		}
	}
}

// watchServed checks the Gateways as they are now, then watches every write
// to them: a watch sees every version of an object, where sampling by polls
// could miss a listener dropped and put back between two polls.
func watchServed(t *testing.T, want map[string][]string) *servedWatch {
	t.Helper()
	w := &servedWatch{want: want, done: make(chan struct{}), events: map[string]int{}}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvkGateway.GroupVersion().WithKind("GatewayList"))
	if err := k8s.List(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		w.judge(&l.Items[i], "LISTED")
	}
	wl := &unstructured.UnstructuredList{}
	wl.SetGroupVersionKind(gvkGateway.GroupVersion().WithKind("GatewayList"))
	wi, err := watchClient(t).Watch(t.Context(), wl, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.GetResourceVersion()}})
	if err != nil {
		t.Fatal(err)
	}
	w.stop = wi.Stop
	go func() {
		defer close(w.done)
		for ev := range wi.ResultChan() {
			gw, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted {
				gw.Object["spec"] = nil
			}
			w.judge(gw, string(ev.Type))
		}
	}()
	t.Cleanup(wi.Stop)
	return w
}

func (w *servedWatch) check(t *testing.T) {
	w.stop()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	for key := range w.want {
		// The listing, the takeover's apply and its hand-over at least.
		if w.events[key] < 3 {
			t.Errorf("saw %d versions of Gateway %s, expected the takeover's writes", w.events[key], key)
		}
	}
	for _, b := range w.bad {
		t.Errorf("a served listener was missing: %s", b)
	}
	t.Logf("versions of the Gateways seen, each with every served listener: %v", w.events)
}

// issued is what cert-manager issued before the switch.
type issued struct {
	serial    *big.Int
	secretUID string
	secretRV  string
	revision  int64
	requests  []string
	notAfter  time.Time
}

// waitIssued waits until cert-manager has issued mig-dns's wildcard
// Certificate for real (Ready, its Secret verifying against Pebble's root
// for every name) and returns the leaf's serial and what would change on a
// re-issue.
func waitIssued(t *testing.T, start time.Time) issued {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(tlsRun(t, "run", "tls", "pebble-root.pem")) {
		t.Fatal("Pebble's root (run/tls/pebble-root.pem) holds no certificate")
	}
	names := []string{"mig-dns.example", "*.mig-dns.example", "bob.mig-dns.example", "*.bob.mig-dns.example"}
	var got issued
	eventually(t, issuance, "Certificate mig-dns/"+migIssuedCert+" issued by cert-manager and Pebble", func() (bool, string) {
		c, found := get(t, gvkCertificate, "mig-dns", migIssuedCert)
		if !found {
			return false, "no Certificate"
		}
		if s, _, _ := condition(c, "Ready"); s != "True" {
			return false, show(c) + "\n" + migChallenges(t)
		}
		s := &corev1.Secret{}
		if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: "mig-dns", Name: migIssuedCert}, s); err != nil {
			return false, err.Error()
		}
		if err := verifies(s, roots, names); err != nil {
			return false, err.Error()
		}
		leaf, err := leafOf(s)
		if err != nil {
			return false, err.Error()
		}
		got.serial, got.notAfter = leaf.SerialNumber, leaf.NotAfter
		got.secretUID, got.secretRV = string(s.UID), s.ResourceVersion
		got.revision, _, _ = unstructured.NestedInt64(c.Object, "status", "revision")
		return true, ""
	})
	got.requests = certificateRequests(t)
	t.Logf("issued %s after the test started (the Certificate was created by the seed, before the install)", time.Since(start).Round(time.Second))
	return got
}

func leafOf(s *corev1.Secret) (*x509.Certificate, error) {
	b, _ := pem.Decode(s.Data[corev1.TLSCertKey])
	if b == nil {
		return nil, fmt.Errorf("Secret %s/%s holds no certificate", s.Namespace, s.Name)
	}
	return x509.ParseCertificate(b.Bytes)
}

// certificateRequests names every CertificateRequest of mig-dns: a
// re-issue makes a new one.
func certificateRequests(t *testing.T) []string {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion("cert-manager.io/v1")
	l.SetKind("CertificateRequestList")
	if err := k8s.List(t.Context(), l, client.InNamespace("mig-dns")); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range l.Items {
		out = append(out, r.GetName()+"@"+string(r.GetUID()))
	}
	slices.Sort(out)
	return out
}

// notReissued: the same Secret, never written, the same leaf, the same
// revision and CertificateRequests, and the Certificate still Ready.
func (was issued) notReissued(t *testing.T) {
	c, _ := get(t, gvkCertificate, "mig-dns", migIssuedCert)
	if s, r, m := condition(c, "Ready"); s != "True" {
		t.Errorf("Certificate mig-dns/%s Ready=%s %s: %s", migIssuedCert, s, r, m)
	}
	if rev, _, _ := unstructured.NestedInt64(c.Object, "status", "revision"); rev != was.revision {
		t.Errorf("Certificate mig-dns/%s revision %d, was %d before the switch: re-issued", migIssuedCert, rev, was.revision)
	}
	s := &corev1.Secret{}
	if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: "mig-dns", Name: migIssuedCert}, s); err != nil {
		t.Fatal(err)
	}
	leaf, err := leafOf(s)
	if err != nil {
		t.Fatal(err)
	}
	if leaf.SerialNumber.Cmp(was.serial) != 0 || string(s.UID) != was.secretUID || s.ResourceVersion != was.secretRV {
		t.Errorf("Secret mig-dns/%s: serial %x uid %s resourceVersion %s, was %x %s %s before the switch", migIssuedCert,
			leaf.SerialNumber, s.UID, s.ResourceVersion, was.serial, was.secretUID, was.secretRV)
	}
	if now := certificateRequests(t); !slices.Equal(now, was.requests) {
		t.Errorf("CertificateRequests of mig-dns %v, were %v before the switch", now, was.requests)
	}
	t.Logf("serial %x (valid until %s) kept through the switch", was.serial, was.notAfter.Format(time.RFC3339))
}

func migChallenges(t *testing.T) string {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion("acme.cert-manager.io/v1")
	l.SetKind("ChallengeList")
	if err := k8s.List(t.Context(), l, client.InNamespace("mig-dns")); err != nil {
		return "challenges: " + err.Error()
	}
	var out []string
	for _, c := range l.Items {
		out = append(out, fmt.Sprintf("challenge %s %s: %s %s", c.GetName(), str(&c, "spec", "dnsName"), str(&c, "status", "state"), str(&c, "status", "reason")))
	}
	return strings.Join(out, "\n")
}

// crd reads the TenantGateway CRD.
func crd(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	u, found := get(t, gvkCRD, "", crdTenantGateways)
	if !found {
		t.Fatalf("CRD %s is gone", crdTenantGateways)
	}
	return u
}

// crossplaneSchema: a version of the CRD has spec.crossplane, which only
// the schema Crossplane renders for our XRD defines.
func crossplaneSchema(u *unstructured.Unstructured) bool {
	for _, v := range slice(u, "spec", "versions") {
		m, _ := v.(map[string]any)
		if _, ok, _ := unstructured.NestedMap(m, "schema", "openAPIV3Schema", "properties", "spec", "properties", "crossplane"); ok {
			return true
		}
	}
	return false
}

// upgradeOldRelease is docs/migration.md, step 10, once Cozystack has
// shipped proposals 1 and 2: the controller's release is upgraded, after
// the takeover, to the chart that no longer renders the TenantGateway CRD
// and runs without the TenantGateway reconciler. The CRD must survive (the
// live object carries keep through the upgrade, Crossplane being stopped
// so that its XRD controller does not remove the annotation), and
// Crossplane, started again, takes its metadata back with its own schema.
func upgradeOldRelease(t *testing.T) {
	t.Helper()
	was := crd(t)
	if !crossplaneSchema(was) {
		t.Fatalf("the CRD does not carry the XRD's schema before the upgrade: %v", was.Object["spec"])
	}
	chart := filepath.Join("testdata", "charts", "cozystack-controller")
	stopProc(t, "crossplane", syscall.SIGTERM)
	operator(t, "kubectl", "annotate", "crd", crdTenantGateways, "helm.sh/resource-policy=keep", "--overwrite")
	operator(t, "kubectl", "-n", controllerNamespace, "patch", "helmrelease", controllerRelease, "--type=merge", "-p", `{"spec":{"suspend":false}}`)
	// The upgrade helm-controller runs for the resumed HelmRelease with the
	// new values, run with Helm's CLI since Flux does not run here. The
	// same Helm code decides what happens to the CRD (deleted unless the
	// live object says keep); what differs (docs/migration.md, "What Flux
	// does when it upgrades the old release"): the field manager is helm,
	// not helm-controller; take-ownership is off, which changes nothing
	// here (the CRD is not new to the release); this release is on
	// server-side apply, where an older Cozystack release may be on the
	// three-way merge. Forcing conflicts, as helm-controller always does
	// under server-side apply: step 3's scale owns the Deployment's
	// spec.replicas (kubectl's scale subresource update), which the
	// chart's replicas: 1 takes back, now that the TenantGateway
	// reconciler is off.
	operator(t, "helm", "upgrade", controllerRelease, chart, "-n", controllerNamespace, "--force-conflicts",
		"--set", "tenantGateway.crd=false", "--set", "tenantGateway.reconciler.enabled=false")
	if m := operator(t, "helm", "get", "manifest", controllerRelease, "-n", controllerNamespace); strings.Contains(m, crdTenantGateways) {
		t.Errorf("the upgraded release still renders the CRD:\n%s", m)
	}
	if now := crd(t); now.GetUID() != was.GetUID() {
		t.Errorf("CRD re-created by the upgrade: uid %s, was %s", now.GetUID(), was.GetUID())
	}
	for _, ns := range []string{"mig-http", "mig-dns"} {
		if _, found := get(t, gvkTenantGateway, ns, "cozystack"); !found {
			t.Errorf("TenantGateway %s/cozystack is gone after the upgrade", ns)
		}
	}
	startProc(t, "crossplane")
	waitHTTP(t, "http://127.0.0.1:18081/readyz", 2*settle)
	eventually(t, 2*settle, "Crossplane's XRD controller controlling the CRD again, with its schema and without keep", func() (bool, string) {
		u := crd(t)
		ref := metav1.GetControllerOfNoCopy(u)
		return ref != nil && ref.Kind == "CompositeResourceDefinition" && crossplaneSchema(u) && u.GetAnnotations()["helm.sh/resource-policy"] == "",
			fmt.Sprintf("owner %v, annotations %v, labels %v", ref, u.GetAnnotations(), u.GetLabels())
	})
	for _, ns := range []string{"mig-http", "mig-dns"} {
		eventually(t, settle, "TenantGateway "+ns+"/cozystack Synced and Ready after Crossplane's restart", func() (bool, string) {
			x := tgw(t, ns, "cozystack")
			s, r, m := condition(x, "Synced")
			return s == "True", fmt.Sprintf("Synced=%s %s: %s", s, r, m)
		})
	}
}
